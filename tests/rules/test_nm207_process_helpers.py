"""NM207: is_main_worker() -> PartialState().is_main_process; is_precompilation() -> False, folded where it is a
test (the branch it selects is kept), else left False with a todo."""

from tests.rules.case import findings, migrate, unchanged


def test_process_helpers_become_accelerate_state() -> None:
    result = migrate(
        """
        from optimum.neuron.utils import is_main_worker, is_precompilation

        def log(msg):
            if is_main_worker() and not is_precompilation():
                print(msg)
        """,
        "NM207",
    )
    assert "from accelerate import PartialState" in result.text
    assert "if PartialState().is_main_process:" in result.text
    assert "optimum.neuron" not in result.text and "False" not in result.text
    assert findings(result, "NM207") == {(4, "fixed")}


def test_a_constant_that_is_no_whole_test_stays_with_a_todo() -> None:
    result = migrate(
        """
        from optimum.neuron.utils import is_precompilation

        def steps(args):
            dry = is_precompilation()
            if args.quick and is_precompilation():
                return 1
            return 10 if is_precompilation() else args.max_steps
        """,
        "NM207",
    )
    # ``args.quick and False``: args.quick is evaluated first, so it stays as written
    assert "dry = False" in result.text and "if args.quick and False:" in result.text
    assert "return args.max_steps" in result.text
    assert findings(result, "NM207") == {(4, "todo"), (5, "todo"), (7, "fixed")}


def test_a_project_function_with_the_same_name_is_left_alone() -> None:
    unchanged(
        """
        def is_main_worker():
            return True

        if is_main_worker():
            print("saving")
        """,
        "NM207",
    )
