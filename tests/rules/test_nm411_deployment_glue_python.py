"""NM411: Neuron DLC images, TGI-neuronx settings and Inf/Trn1 instance types in SageMaker Python: todos only."""

from tests.rules.case import findings, migrate, unchanged


def test_image_env_and_instance_type_get_todos() -> None:
    source = """
        from sagemaker.huggingface import HuggingFaceModel

        model = HuggingFaceModel(
            image_uri="763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-inference-neuronx:2.1.2",
            env={"HF_NUM_CORES": "2", "HF_MODEL_ID": "gpt2"},
            role=role,
        )
        predictor = model.deploy(instance_type="ml.inf2.xlarge", initial_instance_count=1)
        """
    result = migrate(source, "NM411")
    assert 'instance_type="ml.inf2.xlarge"' in result.text  # a deployment decision: nothing is rewritten
    assert findings(result, "NM411") == {(4, "todo"), (5, "todo"), (8, "todo")}


def test_a_gpu_deployment_is_left_alone() -> None:
    unchanged(
        """
        from sagemaker.huggingface import HuggingFaceModel

        model = HuggingFaceModel(env={"HF_MODEL_ID": "gpt2"}, role=role, transformers_version="4.49")
        predictor = model.deploy(instance_type="ml.g5.xlarge", initial_instance_count=1)
        """,
        "NM411",
    )
