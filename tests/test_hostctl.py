"""AgentHandle lifecycle: asking an agent to quit twice, or closing one that already died, never raises
(a teardown that raised half-way would leave the run's processes and namespace behind)."""

from dcnlab.traffic.hostctl import AgentHandle, HostAddr

ADDR = HostAddr("h0", "lo", "127.0.0.1", "02:00:00:00:00:01")


def test_quit_twice_then_close():
    a = AgentHandle(ADDR)
    a.request_quit()
    a.proc.wait(timeout=10)
    a.request_quit()
    a.close()
    assert a.proc.returncode == 0


def test_close_with_unsent_bytes_for_a_dead_agent():
    a = AgentHandle(ADDR)
    a.proc.kill()
    a.proc.wait()
    a.proc.stdin.write('{"cmd": "qu')   # no newline: stays in the (line) buffer; the reader is gone
    a.close()
