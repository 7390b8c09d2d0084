"""A YAML env key whose last entry a launch rule removes goes with it (or keeps an empty value of its form).

``environment:`` / ``env:`` left with a null value is rejected: compose says ``services.x.environment must be a
mapping``, Kubernetes and GitHub Actions want a list / mapping too. Each case re-parses the migrated YAML with
PyYAML and checks the type of what is left.
"""

from __future__ import annotations

import yaml

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

PLAIN = "import torch\n\nprint(torch.ones(2))\n"


def migrate(text: str, path: str = "docker-compose.yml") -> str:
    return apply_rules(text, FileKind.YAML, select=["NM4"], path=path, project={"train.py": PLAIN}).text


def service(text: str, name: str = "t") -> dict:
    return yaml.safe_load(migrate(text))["services"][name]


def test_compose_list_emptied_drops_the_key():
    before = (
        "services:\n  t:\n    image: x\n    environment:\n      - PJRT_DEVICE=NEURON\n"
        '      - NEURON_FUSE_SOFTMAX=1\n    command: ["python", "train.py"]\n'
    )
    assert service(before) == {"image": "x", "command": ["python", "train.py"]}


def test_compose_list_at_key_indent_emptied():
    before = "services:\n  t:\n    environment:\n    - PJRT_DEVICE=NEURON\n    image: x\n"
    assert service(before) == {"image": "x"}


def test_compose_mapping_emptied_drops_the_key():
    before = "services:\n  t:\n    environment:\n      PJRT_DEVICE: NEURON\n      XLA_FLAGS: --xla_dump_to=/d\n" \
             "    image: x\n"
    assert service(before) == {"image": "x"}


def test_entries_of_two_rules_emptied():
    # NM403 removes the switched-off XLA_USE_BF16, NM404 PJRT_DEVICE, NM402 NEURON_EXTRACT_GRAPHS_ONLY: the key goes
    # with whichever removal comes last
    before = "services:\n  t:\n    environment:\n      - XLA_USE_BF16=0\n      - PJRT_DEVICE=NEURON\n    image: x\n"
    assert service(before) == {"image": "x"}
    other = "services:\n  t:\n    environment:\n      - PJRT_DEVICE=NEURON\n      - NEURON_EXTRACT_GRAPHS_ONLY=0\n" \
            "    image: x\n"
    assert service(other) == {"image": "x"}


def test_kept_entry_keeps_the_key():
    before = "services:\n  t:\n    environment:\n      - PJRT_DEVICE=NEURON\n      - MALLOC_ARENA_MAX=64\n" \
             "    image: x\n"
    assert service(before)["environment"] == ["MALLOC_ARENA_MAX=64"]
    kept = "services:\n  t:\n    environment:\n      MALLOC_ARENA_MAX: 64\n      PJRT_DEVICE: NEURON\n    image: x\n"
    assert service(kept)["environment"] == {"MALLOC_ARENA_MAX": 64}


def test_commented_key_keeps_an_empty_value():
    before = "services:\n  t:\n    # runtime settings\n    environment:\n      - PJRT_DEVICE=NEURON\n    image: x\n"
    after = migrate(before)
    assert "# runtime settings\n    environment: []\n" in after
    assert yaml.safe_load(after)["services"]["t"]["environment"] == []
    inside = "services:\n  t:\n    environment:\n      # - EXTRA=1\n      PJRT_DEVICE: NEURON\n    image: x\n"
    after = migrate(inside)
    assert "environment: {}\n      # - EXTRA=1\n" in after
    assert yaml.safe_load(after)["services"]["t"]["environment"] == {}


def test_anchored_mapping_stays_mergeable():
    before = "x-env: &env\n  PJRT_DEVICE: NEURON\nservices:\n  t:\n    environment:\n      <<: *env\n    image: x\n"
    assert service(before)["environment"] == {}


def test_kubernetes_env_list_emptied():
    before = (
        "spec:\n  containers:\n    - name: t\n      image: x\n      env:\n        - name: PJRT_DEVICE\n"
        '          value: NEURON\n      command: ["python", "train.py"]\n'
        "    - name: u\n      env:\n        - name: PJRT_DEVICE\n          value: NEURON\n"
        "        - name: LOG\n          value: info\n"
    )
    containers = yaml.safe_load(migrate(before, "job.yaml"))["spec"]["containers"]
    assert containers[0] == {"name": "t", "image": "x", "command": ["python", "train.py"]}
    assert containers[1]["env"] == [{"name": "LOG", "value": "info"}]


def test_workflow_env_mappings_emptied():
    before = (
        "on: push\nenv:\n  XLA_FLAGS: --xla_dump_to=/d\njobs:\n  test:\n    runs-on: ubuntu-latest\n    env:\n"
        "      PJRT_DEVICE: NEURON\n    steps:\n      - run: python train.py\n        env:\n"
        "          NEURON_FUSE_SOFTMAX: '1'\n"
    )
    after = yaml.safe_load(migrate(before, ".github/workflows/ci.yml"))
    assert "env" not in after
    assert after["jobs"]["test"] == {"runs-on": "ubuntu-latest", "steps": [{"run": "python train.py"}]}


def test_second_run_changes_nothing():
    before = "services:\n  t:\n    # settings\n    environment:\n      - PJRT_DEVICE=NEURON\n    image: x\n"
    once = migrate(before)
    assert migrate(once) == once


def test_kubernetes_value_from_goes_with_its_item():
    # `valueFrom:` and the lines under it belong to the `- name:` item: left behind, they became invalid YAML
    before = (
        "spec:\n  containers:\n    - name: t\n      env:\n        - name: PJRT_DEVICE\n          # from the map\n"
        "          valueFrom:\n            configMapKeyRef:\n              name: c\n              key: k\n"
        "        - name: LOG\n          value: info\n      image: x\n"
    )
    [container] = yaml.safe_load(migrate(before, "job.yaml"))["spec"]["containers"]
    assert container == {"name": "t", "env": [{"name": "LOG", "value": "info"}], "image": "x"}
    alone = "spec:\n  containers:\n    - name: t\n      env:\n        - name: PJRT_DEVICE\n" \
            "          valueFrom: {configMapKeyRef: {name: c, key: k}}\n\n      image: x\n"
    assert yaml.safe_load(migrate(alone, "job.yaml"))["spec"]["containers"] == [{"name": "t", "image": "x"}]
