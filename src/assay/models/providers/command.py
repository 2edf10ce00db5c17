"""The command provider: a shell command reads the prompt on stdin and writes the output."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

from assay.models.providers._base import Completion, ProviderConfig, ProviderError, ProviderTimeout


class CommandProvider:
    def __init__(self, config: ProviderConfig):
        if not config.command:
            raise ValueError("the command provider needs 'command'")
        self.config = config

    async def complete(self, prompt: str) -> Completion:
        # A session of its own, so a timeout can stop the command and every child it started.
        try:
            process = await asyncio.create_subprocess_shell(
                self.config.command or "",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            # No shell, too many open files or processes: this call failed, maybe for now.
            raise ProviderError(
                f"the command could not start: {exc.strerror or exc}", retryable=True
            ) from None
        try:
            out, _err = await asyncio.wait_for(
                process.communicate(prompt.encode("utf-8")), timeout=self.config.timeout_s
            )
        except (TimeoutError, asyncio.CancelledError) as exc:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise ProviderTimeout(
                f"the command timed out after {self.config.timeout_s:g} s"
            ) from None
        if process.returncode is not None and process.returncode < 0:
            raise ProviderError(
                f"the command was killed by signal {-process.returncode}", retryable=False
            )
        if process.returncode != 0:
            # stderr may quote the prompt: report the exit code only.
            raise ProviderError(f"the command exited with {process.returncode}", retryable=False)
        return Completion(out.decode("utf-8", errors="replace"))

    async def aclose(self) -> None:
        return None
