"""NM316: XLA/Neuron environment variables set from Python are removed, reviewed or renamed, except where the
torch_xla-era code that reads them stays."""

from tests.rules.case import findings, migrate, unchanged

CC_FLAGS_NOTE = "# neuron-migrate: review NEURON_CC_FLAGS"


def test_literal_cc_flags_without_a_flag_to_drop_get_no_note() -> None:
    # --model-type and the other options neuronx-cc still takes: nothing to review, nothing to say
    unchanged('import os\n\nos.environ["NEURON_CC_FLAGS"] = "--model-type=transformer --enable-saturate-infinity"\n',
              "NM316")
    unchanged('import os\n\nos.environ["NEURON_CC_FLAGS"] = " --disable-dge "\n', "NM316")


def test_literal_cc_flags_name_each_flag_to_drop() -> None:
    source = ('import os\n\nos.environ["NEURON_CC_FLAGS"] = ("--model-type=transformer --target=trn1 "\n'
              '                                "--cache_dir=/var/cache --retry_failed_compilation")\n')
    result = migrate(source, "NM316")
    assert findings(result, "NM316") == {(3, "todo")}
    note = next(line for line in result.text.splitlines() if CC_FLAGS_NOTE in line)
    assert "drop --target=trn1 (--target is derived by TorchNeuron from the host)" in note
    assert "drop --cache_dir=/var/cache (--cache_dir was the torch_xla persistent cache" in note
    assert "drop --retry_failed_compilation" in note
    assert "--model-type" not in note  # a kept option is not named
    assert 'os.environ["NEURON_CC_FLAGS"] = ("--model-type=transformer --target=trn1 "' in result.text  # kept


def test_cc_flags_computed_at_run_time_keep_the_general_note() -> None:
    # the value is not all here: the flags it ends up with cannot be checked, so the general review note stays
    source = 'import os\n\nos.environ["NEURON_CC_FLAGS"] = os.environ.get("NEURON_CC_FLAGS", "") + " -O1"\n'
    result = migrate(source, "NM316")
    assert findings(result, "NM316") == {(3, "todo")}
    assert "derives --target/--lnc itself; drop those and XLA-era cache flags" in result.text
