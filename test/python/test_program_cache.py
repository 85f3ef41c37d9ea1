"""The drop-ins' compiled functions, one per signature, are kept in a
bounded cache: beyond its capacity the least recently used is dropped
(and counted), a dropped signature compiles again when called, results
stay correct, and the bound is set by set_program_cache_size or
RUDNN_PROGRAM_CACHE_SIZE."""

import os
import subprocess
import sys
import textwrap
import threading

import pytest
import torch
import torch.nn.functional as F

import rudnn
import rudnn.torch as rt
from conftest import assert_close

C = 12
EPS = (1e-3, 1e-4, 1e-5)  # one signature each


@pytest.fixture
def capacity_2():
    previous = rt.set_program_cache_size(2)
    yield
    rt.set_program_cache_size(previous)


def rms_norm_matches_torch(eps):
    x = torch.randn(3, C)
    assert_close(rt.rms_norm(x, (C,), eps=eps), F.rms_norm(x.double(), (C,), eps=eps), 1e-5, "y")


def test_least_recently_used_programs_are_dropped(capacity_2):
    start = rt.program_cache_info()
    assert start["capacity"] == 2 and start["size"] <= 2
    for eps in EPS:
        rms_norm_matches_torch(eps)
    info = rt.program_cache_info()
    assert info["misses"] - start["misses"] == 3
    assert info["evictions"] - start["evictions"] == 1 + start["size"]
    assert info["size"] == 2
    rms_norm_matches_torch(EPS[2])  # the most recent: kept
    after_hit = rt.program_cache_info()
    assert after_hit["hits"] == info["hits"] + 1 and after_hit["misses"] == info["misses"]
    rms_norm_matches_torch(EPS[0])  # the least recent was dropped: compiled again
    again = rt.program_cache_info()
    assert again["misses"] == info["misses"] + 1
    assert again["evictions"] == info["evictions"] + 1


def test_program_cache_counts_from_the_environment():
    # A fresh process: RUDNN_PROGRAM_CACHE_SIZE read at import, the counters
    # from zero.
    script = textwrap.dedent(
        f"""
        import torch
        import rudnn.torch as rt
        x = torch.randn(3, {C})
        assert rt.program_cache_info() == dict(
            size=0, capacity=2, hits=0, misses=0, evictions=0
        ), rt.program_cache_info()
        for eps in {EPS!r}:
            rt.rms_norm(x, ({C},), eps=eps)
        y = rt.rms_norm(x, ({C},), eps={EPS[2]!r})
        expected = torch.nn.functional.rms_norm(x, ({C},), eps={EPS[2]!r})
        assert torch.allclose(y, expected, rtol=1e-5, atol=1e-6)
        print(rt.program_cache_info())
        """
    )
    environment = dict(os.environ, RUDNN_PROGRAM_CACHE_SIZE="2")
    run = subprocess.run(
        [sys.executable, "-c", script], env=environment, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1] == str(
        dict(size=2, capacity=2, hits=1, misses=3, evictions=1)
    )


def test_a_bad_environment_value_warns_and_keeps_the_default():
    script = "import rudnn.torch as rt; print(rt.program_cache_info()['capacity'])"
    for value in ("-3", "many"):
        environment = dict(os.environ, RUDNN_PROGRAM_CACHE_SIZE=value)
        run = subprocess.run(
            [sys.executable, "-c", script], env=environment, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == "256"
        assert "RUDNN_PROGRAM_CACHE_SIZE" in run.stderr


@pytest.mark.parametrize("capacity", [0, -1, True, 2.0, "8"])
def test_set_program_cache_size_takes_a_positive_count(capacity):
    before = rt.program_cache_info()["capacity"]
    with pytest.raises(rudnn.InvalidArgument) as error:
        rt.set_program_cache_size(capacity)
    assert error.value.argument == "capacity"
    assert rt.program_cache_info()["capacity"] == before


def test_shrinking_drops_at_once(capacity_2):
    rms_norm_matches_torch(EPS[0])
    rms_norm_matches_torch(EPS[1])
    evictions = rt.program_cache_info()["evictions"]
    assert rt.set_program_cache_size(1) == 2
    info = rt.program_cache_info()
    assert info["size"] == 1 and info["evictions"] == evictions + 1


def test_threads_share_the_bounded_cache(capacity_2):
    start = rt.program_cache_info()
    calls, failures = 8, []
    x = torch.randn(5, C)
    expected = {eps: F.rms_norm(x.double(), (C,), eps=eps) for eps in EPS}

    def work(index):
        try:
            for call in range(calls):
                eps = EPS[(index + call) % len(EPS)]
                assert_close(rt.rms_norm(x, (C,), eps=eps), expected[eps], 1e-5, "y")
        except Exception as error:  # reported below, from the main thread
            failures.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures
    info = rt.program_cache_info()
    assert info["size"] <= 2
    assert (info["hits"] + info["misses"]) - (start["hits"] + start["misses"]) == 4 * calls
