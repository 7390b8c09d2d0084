"""NEURON_FRAMEWORK_DEBUG=1 made the Neuron compiler keep its NEFFs for inspection (profiling notebooks rely on it):
it is renamed to TorchNeuron's TORCH_NEURONX_PRESERVE_COMPILATION_ARTIFACTS with a todo (the artifacts move),
never deleted as fixed, wherever the shared env-var table is applied."""

from migrate.filekinds import FileKind
from tests.rules.case import findings, migrate

_PRESERVE = "TORCH_NEURONX_PRESERVE_COMPILATION_ARTIFACTS"


def test_python_assignment_is_renamed_with_a_todo() -> None:
    result = migrate(
        """
        import os

        os.environ["NEURON_FRAMEWORK_DEBUG"] = "1"
        """,
        "NM316",
    )
    assert f'os.environ["{_PRESERVE}"] = "1"' in result.text
    assert "TORCH_NEURONX_DEBUG_DIR" in result.text  # the note says where the NEFFs now are
    assert findings(result, "NM316") == {(3, "todo")}


def test_shell_export_is_renamed_with_a_todo() -> None:
    result = migrate("export NEURON_FRAMEWORK_DEBUG=1\npython kernel.py\n", "NM404", kind=FileKind.SHELL,
                     path="profile.sh")
    assert f"export {_PRESERVE}=1" in result.text
    assert findings(result, "NM404") == {(1, "todo")}


def test_sagemaker_job_environment_says_what_to_set() -> None:
    result = migrate(
        """
        job = PyTorch(entry_point="k.py", instance_type="ml.trn1.2xlarge", environment={"NEURON_FRAMEWORK_DEBUG": "1"})
        """,
        "NM411",
    )
    assert '"NEURON_FRAMEWORK_DEBUG": "1"' in result.text  # NM411 rewrites nothing
    assert any(_PRESERVE in line for line in result.text.splitlines() if line.startswith("# neuron-migrate:"))
    assert findings(result, "NM411") == {(1, "todo")}
