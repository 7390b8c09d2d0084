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


KEPT_NOTE = ("was left as it is: this file keeps {code} (XLA-era code, left untouched), where it keeps its "
             "torch_xla meaning")
HEAD = 'import os\nimport torch_neuronx\nfrom neuronxcc import nki\n\nos.environ["XLA_USE_BF16"] = "1"\n'


def test_xla_variables_beside_a_kept_trace_stay_with_a_todo() -> None:
    source = '''
        import os
        import torch_neuronx
        from torch_neuronx import trace as aot_trace

        os.environ["XLA_USE_BF16"] = "1"
        os.environ.setdefault("NEURONX_DUMP_TO", "/tmp/dumps")
        os.environ["OPTIMUM_NEURON_COMMON_CACHE"] = "x"
        traced = aot_trace(model, example)
        '''
    result = migrate(source, "NM316")
    assert 'os.environ["XLA_USE_BF16"] = "1"' in result.text  # still read by the trace: not removed
    assert 'os.environ.setdefault("NEURONX_DUMP_TO", "/tmp/dumps")' in result.text  # nor renamed
    assert "OPTIMUM_NEURON_COMMON_CACHE" not in result.text  # optimum-neuron's: the trace never read it
    assert "XLA_USE_BF16 " + KEPT_NOTE.format(code="torch_neuronx.trace") in result.text
    assert findings(result, "NM316") == {(5, "todo"), (6, "todo"), (7, "fixed")}


def test_nki_kernels_pinned_to_the_xla_device_keep_the_variables() -> None:
    for kernel in ('@nki.jit(mode="torchxla")\ndef k(x):\n    return x\n',
                   'k = nki.jit(mode="torchxla")(body)\n',
                   '@torch_neuronx.nki_jit\ndef k(x):\n    return x\n'):
        source = HEAD + kernel
        result = migrate(source, "NM316")
        assert 'os.environ["XLA_USE_BF16"] = "1"' in result.text, kernel
        assert findings(result, "NM316") == {(5, "todo")}, kernel


def test_host_mode_kernels_and_a_file_without_xla_era_code_lose_the_variables() -> None:
    for tail in ('@nki.jit(mode="simulation")\ndef k(x):\n    return x\n', 'y = torch_neuronx.__version__\n', ''):
        source = HEAD + tail
        result = migrate(source, "NM316")
        assert 'os.environ["XLA_USE_BF16"] = "1"' not in result.text, tail
        assert "was left as it is" not in result.text, tail
