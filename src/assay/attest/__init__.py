"""Clean-run attestation: commit to the answers, scan the journal, seal and verify a verdict.

The record never holds ground-truth text: only keyed HMAC digests of normalised shingles.
"""

from assay.attest._canonical import canonical_json
from assay.attest._journal import GENESIS, KINDS, Journal, JournalCheck, event_hash
from assay.attest._key import key_id, keygen, load_key, resolve_key_path
from assay.attest._ledger import parse_id, store
from assay.attest._scan import inside, words_of
from assay.attest._seal import Sealed, build_record, seal
from assay.attest._truth import given_texts, ground_truth
from assay.attest._verify import Verification, verify

__all__ = [
    "GENESIS",
    "KINDS",
    "Journal",
    "JournalCheck",
    "Sealed",
    "Verification",
    "build_record",
    "canonical_json",
    "event_hash",
    "given_texts",
    "ground_truth",
    "inside",
    "key_id",
    "keygen",
    "load_key",
    "parse_id",
    "resolve_key_path",
    "seal",
    "store",
    "verify",
    "words_of",
]
