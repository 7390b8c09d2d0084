"""Launch the summarization job on a trn1.32xlarge through SageMaker."""
import sagemaker
from sagemaker.huggingface import HuggingFace

sess = sagemaker.Session()
role = sagemaker.get_execution_role()

hyperparameters = {
    "model_name_or_path": "google/flan-t5-base",
    "dataset_name": "cnn_dailymail",
    "dataset_config": "3.0.0",
    "do_train": True,
    "do_eval": True,
    "per_device_train_batch_size": 4,
    "gradient_accumulation_steps": 8,
    "num_train_epochs": 3,
    "learning_rate": 5e-5,
    "bf16": True,
    "zero_1": True,
    "tensor_parallel_size": 2,
    "predict_with_generate": True,
    "generation_max_length": 128,
    "evaluation_strategy": "epoch",
    "output_dir": "/opt/ml/model",
}

estimator = HuggingFace(
    entry_point="train_summarize.py",
    source_dir="..",
    instance_type="ml.trn1.32xlarge",
    instance_count=1,
    role=role,
    image_uri="763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-training-neuronx:2.1.2-transformers4.36.2-neuronx-py310-sdk2.18.0-ubuntu20.04",
    py_version="py310",
    hyperparameters=hyperparameters,
    distribution={"torch_distributed": {"enabled": True}},
    environment={"NEURON_CC_FLAGS": "--model-type=transformer", "XLA_USE_BF16": "1"},
    volume_size=512,
)
estimator.fit({"train": "s3://my-bucket/cnn/"}, wait=False)
print(estimator.latest_training_job.name)
