"""NM409: Neuron DLC images, TGI-neuronx settings and Inf/Trn1 instance types in launch files: todos only, with the
advice that fits the reference's use (training or serving)."""

from migrate.filekinds import FileKind
from tests.rules.case import findings, migrate, unchanged


def _notes(result) -> list[str]:
    return [line.strip() for line in result.text.splitlines() if line.strip().startswith("# neuron-migrate:")]


def test_a_training_image_gets_training_advice() -> None:
    source = """
        FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training-neuronx:2.1.2-sdk2.20.0
        RUN pip install -r requirements.txt
        """
    result = migrate(source, "NM409", kind=FileKind.DOCKERFILE, path="Dockerfile")
    (note,) = _notes(result)
    assert "trains on Trn2/Trn3" in note and "vLLM" not in note
    assert findings(result, "NM409") == {(1, "todo")}


def test_a_serving_image_gets_serving_advice_and_an_instance_alone_gets_both() -> None:
    source = """
        docker run -e HF_NUM_CORES=2 ghcr.io/huggingface/neuronx-tgi:0.0.25
        aws sagemaker create-endpoint-config --instance-type ml.inf2.xlarge
        """
    result = migrate(source, "NM409", kind=FileKind.SHELL, path="serve.sh")
    serving = [note for note in _notes(result) if "HF_NUM_CORES" in note or "neuronx-tgi" in note]
    (instance,) = [note for note in _notes(result) if "ml.inf2.xlarge" in note]
    assert len(serving) == 2 and all("serves through the vLLM-Neuron plugin" in note for note in serving)
    assert "training in a TorchNeuron container" in instance and "serving through the vLLM-Neuron plugin" in instance
    assert findings(result, "NM409") == {(1, "todo"), (2, "todo")}


def test_a_trn2_launch_is_left_alone() -> None:
    unchanged(
        """
        # moved off the pytorch-training-neuronx image
        aws sagemaker create-training-job --instance-type ml.trn2.48xlarge
        """,
        "NM409", kind=FileKind.SHELL, path="launch.sh",
    )


def test_an_ec2_instance_type_in_a_node_selector_is_reported() -> None:
    source = """
        spec:
          nodeSelector:
            node.kubernetes.io/instance-type: inf2.8xlarge
          containers:
            - name: app
              image: my-registry/chat-app:1.4
        """
    result = migrate(source, "NM409", kind=FileKind.YAML, path="k8s/deployment.yaml")
    (note,) = _notes(result)
    assert "inf2.8xlarge" in note and "Trn2/Trn3" in note
    assert findings(result, "NM409") == {(3, "todo")}


def test_trn2_types_and_lookalike_names_are_left_alone() -> None:
    unchanged(
        """
        spec:
          nodeSelector:
            node.kubernetes.io/instance-type: trn2.48xlarge
          containers:
            - name: app
              image: my-registry/inf2.8xlarge-benchmarks:1.0
              args: ["--config", "configs/inf2.yaml"]
        """,
        "NM409", kind=FileKind.YAML, path="k8s/deployment.yaml",
    )


def test_vllm_on_its_earlier_neuron_platform_gets_one_todo_on_the_device_line() -> None:
    source = """
        MODEL=/models/llama-3-8b
        vllm serve "$MODEL" \\
            --device neuron \\
            --tensor-parallel-size 2 \\
            --block-size 2048
        python -m vllm.entrypoints.openai.api_server --model "$MODEL" --device=neuron
        """
    result = migrate(source, "NM409", kind=FileKind.SHELL, path="scripts/serve_vllm.sh")
    notes = _notes(result)
    assert len(notes) == 2 and all("vLLM-Neuron plugin" in note for note in notes)
    assert "--device neuron" in notes[0] and "--device=neuron" in notes[1]
    assert findings(result, "NM409") == {(3, "todo"), (6, "todo")}


def test_torchneuron_device_flags_on_other_commands_are_left_alone() -> None:
    unchanged(
        """
        transformers serve Qwen/Qwen2.5-0.5B-Instruct --device neuron --compile
        torchrun --nproc_per_node 2 train.py --device neuron
        vllm serve Qwen/Qwen2.5-0.5B-Instruct --tensor-parallel-size 2
        """,
        "NM409", kind=FileKind.SHELL, path="serve.sh",
    )


def test_tgi_compile_settings_get_one_note_per_service_naming_each_setting() -> None:
    source = """
        services:
          tgi:
            image: my-registry/llm:1.0
            environment:
              - HF_MODEL_ID=meta-llama/Meta-Llama-3-8B-Instruct
              - HF_NUM_CORES=2
              - HF_BATCH_SIZE=4
              # compiled for 2k
              - HF_SEQUENCE_LENGTH=2048
              - HF_AUTO_CAST_TYPE=bf16
          other:
            environment:
              - HF_AUTO_CAST_TYPE=fp16
        """
    result = migrate(source, "NM409", kind=FileKind.YAML, path="docker-compose.yml")
    first, second = _notes(result)
    assert "(HF_NUM_CORES, HF_BATCH_SIZE, HF_SEQUENCE_LENGTH, HF_AUTO_CAST_TYPE)" in first
    assert "HF_BATCH_SIZE -> --max-num-seqs" in first and "HF_SEQUENCE_LENGTH -> --max-model-len" in first
    assert "(HF_AUTO_CAST_TYPE)" in second
    assert findings(result, "NM409") == {(6, "todo"), (13, "todo")}


def test_batch_and_length_settings_alone_are_not_tgi_neuronx() -> None:
    unchanged(
        """
        services:
          app:
            environment:
              - HF_BATCH_SIZE=4
              - HF_SEQUENCE_LENGTH=2048
        """,
        "NM409", kind=FileKind.YAML, path="docker-compose.yml",
    )
