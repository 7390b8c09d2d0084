"""Launch the SFT job on SageMaker (ml.trn1.32xlarge)."""
import sagemaker
from sagemaker.huggingface import HuggingFace
from sagemaker.pytorch import PyTorch

sess = sagemaker.Session()
role = sagemaker.get_execution_role()

USE_HF_DLC = True

hyperparameters = {
    "model_id": "meta-llama/Meta-Llama-3-8B",
    "dataset_name": "databricks/databricks-dolly-15k",
    "output_dir": "/opt/ml/model",
    "per_device_train_batch_size": 1,
    "gradient_accumulation_steps": 8,
    "learning_rate": 5e-5,
    "bf16": True,
    "tensor_parallel_size": 8,
    "sequence_parallel_enabled": True,
    "zero_1": True,
    "gradient_checkpointing": True,
    "max_seq_length": 1024,
    "packing": True,
    "max_steps": -1,
}

env = {
    "NEURON_CC_FLAGS": "--model-type=transformer --distribution-strategy=llm-training",
    "XLA_USE_BF16": "1",
    "NEURON_RT_STOCHASTIC_ROUNDING_EN": "1",
    "HF_TOKEN": "<your-token>",
}

common = dict(
    entry_point="train_sft.py",
    source_dir="../src",
    instance_type="ml.trn1.32xlarge",
    instance_count=1,
    role=role,
    volume_size=512,
    hyperparameters=hyperparameters,
    environment=env,
    distribution={"torch_distributed": {"enabled": True}},
)

if USE_HF_DLC:
    estimator = HuggingFace(
        transformers_version="4.36.2",
        pytorch_version="2.1.2",
        py_version="py310",
        image_uri="763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-training-neuronx:2.1.2-transformers4.36.2-neuronx-py310-sdk2.18.0-ubuntu20.04",
        **common,
    )
else:
    estimator = PyTorch(framework_version="2.1.2", py_version="py310", **common)

estimator.fit({"train": "s3://my-bucket/dolly/"})
