"""Ctrl-C during an interactive turn cancels it without a ``KeyboardInterrupt`` in the main
thread (one raised inside a queue's lock once left a session hanging), and stays the prompts'
``KeyboardInterrupt`` while a question is asked."""

from __future__ import annotations

import signal
import subprocess
import sys

from mycode_core.testing import signals_as_in_a_terminal

SCRIPT = """
import os, queue, signal, sys, threading, time
from mycode_core.cli.signals import CtrlCCancelsTurn

wait = float(sys.argv[1])  # seconds to wait for what should happen
cancels = []
asking = [False]
waiting = queue.Queue()
with CtrlCCancelsTurn(lambda: cancels.append(1), asking=lambda: asking[0]):
    for _ in range(100):
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(20):  # the main thread in a queue's lock, as while a turn runs
            try:
                waiting.get(timeout=0.0001)
            except queue.Empty:
                pass
    deadline = time.monotonic() + wait
    while not cancels and time.monotonic() < deadline:
        time.sleep(0.01)
    print("cancelled", bool(cancels))
    asking[0] = True
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(wait)
        print("asking: no interrupt")
    except KeyboardInterrupt:
        print("asking: interrupt")
print("restored", signal.getsignal(signal.SIGINT) is signal.default_int_handler)
"""


def _run(preexec: object, wait: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, str(wait)],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=preexec,  # type: ignore[arg-type]
    )


def test_ctrl_c_in_a_turn_cancels_and_at_a_question_interrupts() -> None:
    done = _run(signals_as_in_a_terminal, wait=60)
    assert done.returncode == 0, done.stderr
    assert "KeyboardInterrupt" not in done.stderr
    assert done.stdout.split("\n")[:3] == ["cancelled True", "asking: interrupt", "restored True"]


def test_ctrl_c_ignored_at_start_stays_ignored() -> None:
    def ignore_sigint() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    done = _run(ignore_sigint, wait=1)  # nothing is delivered, so nothing to wait for
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == [
        "cancelled False",
        "asking: no interrupt",
        "restored False",
    ]
