"""The instruction count of dcnlab.reproduce.cist.opcount is the same on a code object's first traced call as on
later ones (Python 3.12+ instruments a code object for opcode events only from its next call on)."""

from dcnlab.reproduce.cist import opcount


def test_a_never_traced_function_is_counted_in_full_on_its_first_count():
    def fresh() -> int:          # a new code object, never traced before (whatever ran earlier in the session)
        def inner(i: int) -> int:
            return i * i
        return sum(inner(i) for i in range(50))

    first = opcount.count_instructions(fresh)
    assert first == opcount.count_instructions(fresh) == opcount.count_instructions(fresh) > 200
