"""Internal errors: exceptions raised by dcefuzz's own code, which are never torch's bugs.

A program's eager and compiled runs record what they raise (``fuzzer.judge.observe``):
that is an observation, which the contract judges.  Anything else that raises
(generating a program, judging its runs, confirming, shrinking, triaging it) is
dcefuzz failing, and a fuzzer that reported its own failure as a compiler bug would
send a PyTorch developer after a bug that is not there.  So such an exception is
caught where a campaign does that work, recorded as an :class:`InternalError` with
its traceback, counted (the summary, the progress line, ``dcefuzz stats``) and written
to the campaign folder's ``internal-errors.jsonl``, and never becomes a finding, never
shrunk, never saved to the corpus.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass

#: the trial status of a program whose trial dcefuzz itself failed
INTERNAL_ERROR = "internal-error"

#: where in the pipeline dcefuzz's own code raised
TRIAL, SHRINK, TRIAGE, WORKER = "trial", "shrink", "triage", "worker"

#: characters of a traceback kept (its end: where it was raised)
TRACEBACK_CHARS = 6000


#: the words of torch's CUDA (and HIP) runtime errors.  A kernel that faults (an illegal
#: address, a device-side assert, a misaligned access, a launch failure) leaves the
#: process's context in a sticky error state: the fault is reported by whatever CUDA
#: call comes next, here or in any later program, and every call after that raises it
#: again.  Such an error met outside the runs a trial observes (creating the next
#: binding's inputs, the judge's copy to the CPU) is recorded as dcefuzz's own error,
#: and the process can test nothing more
DEVICE_ERROR_WORDS = ("CUDA error", "CUDA driver error", "HIP error")


def device_lost(type_name: str, message: str) -> bool:
    """An error of the device's runtime: the process can run nothing more on it.
    torch raises ``torch.AcceleratorError`` for them (2.8 and later), a ``RuntimeError``
    with the same words before."""
    return type_name == "AcceleratorError" or any(w in message for w in DEVICE_ERROR_WORDS)


@dataclass(frozen=True)
class InternalError:
    """One exception of dcefuzz's own code: where it happened, what it was."""

    stage: str
    type: str
    message: str
    traceback: str = ""

    @classmethod
    def of(cls, stage: str, exc: BaseException) -> InternalError:
        text = "".join(traceback.format_exception(exc))[-TRACEBACK_CHARS:]
        return cls(stage, type(exc).__name__, str(exc).strip().splitlines()[0][:300] if str(exc).strip() else "",
                   text)

    def line(self) -> str:
        return f"{self.stage}: {self.type}: {self.message}"

    @property
    def device_lost(self) -> bool:
        """Whether the process's device is unusable after this error (:func:`device_lost`)."""
        return device_lost(self.type, self.message)

    def to_json(self) -> dict:
        return {"stage": self.stage, "type": self.type, "message": self.message, "traceback": self.traceback}

    @classmethod
    def from_json(cls, data: dict) -> InternalError:
        return cls(str(data["stage"]), str(data["type"]), str(data.get("message", "")),
                   str(data.get("traceback", "")))
