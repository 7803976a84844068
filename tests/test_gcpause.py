"""memcore.gcpause: the cyclic collector paused for a bulk load, nested and across threads, and restored as found."""

from __future__ import annotations

import gc
import threading

import pytest

from memcore import gcpause


@pytest.fixture(autouse=True)
def _collector_as_found():
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def test_paused_for_the_block_and_back_after() -> None:
    gc.enable()
    with gcpause.paused():
        assert not gc.isenabled()
        with gcpause.paused():  # nested
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block still runs
    assert gc.isenabled()


def test_back_when_the_last_of_several_threads_ends_even_on_an_error() -> None:
    gc.enable()
    inside, release = threading.Event(), threading.Event()

    def load() -> None:
        with gcpause.paused():
            inside.set()
            release.wait(10)

    t = threading.Thread(target=load)
    t.start()
    inside.wait(10)
    with pytest.raises(RuntimeError), gcpause.paused():
        raise RuntimeError("a load that fails")
    assert not gc.isenabled()  # the other thread's load still runs
    release.set()
    t.join(10)
    assert gc.isenabled()


def test_a_process_with_the_collector_off_keeps_it_off() -> None:
    gc.disable()
    with gcpause.paused():
        pass
    assert not gc.isenabled()
