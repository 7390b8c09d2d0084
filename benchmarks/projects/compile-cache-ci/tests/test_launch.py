import sys
sys.path.insert(0, "tools")
import argparse
import launch


def _ns(**kw):
    base = dict(model="m", out="o", data=None, bs=8, max_steps=0, precompile=False)
    base.update(kw)
    return argparse.Namespace(**base)


def test_plain():
    cmd = launch.build_cmd(_ns())
    assert cmd[0] == "torchrun"
    assert "src/train_clf.py" in cmd


def test_precompile_prefix():
    cmd = launch.build_cmd(_ns(precompile=True, max_steps=10))
    assert cmd[0] == "neuron_parallel_compile"
    assert cmd[1] == "torchrun"
