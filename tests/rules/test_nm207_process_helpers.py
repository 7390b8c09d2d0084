"""NM207: is_main_worker() -> PartialState().is_main_process; is_precompilation() -> False with a todo."""

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
    assert "if PartialState().is_main_process and not False:" in result.text
    assert "optimum.neuron" not in result.text
    assert findings(result, "NM207") == {(4, "fixed"), (4, "todo")}


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
