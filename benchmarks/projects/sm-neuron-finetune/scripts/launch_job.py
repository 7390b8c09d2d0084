"""CI launcher: same job as the notebook, parameterised from the command line."""
import argparse

from sagemaker.pytorch import PyTorch

parser = argparse.ArgumentParser()
parser.add_argument("--tp", type=int, default=8)
parser.add_argument("--instance_count", type=int, default=2)
parser.add_argument("--role", required=True)
args = parser.parse_args()

hp = dict(
    model_id="meta-llama/Llama-2-7b-hf",
    tensor_parallel_size=args.tp,
    zero_1=True,
    bf16=True,
    max_steps=1000,
    per_device_train_batch_size=1,
    output_dir="/opt/ml/checkpoints",
)

est = PyTorch(
    entry_point="train.py",
    source_dir="src",
    role=args.role,
    image_uri="763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training-neuronx:1.13.1-neuronx-py310-sdk2.18.0-ubuntu20.04",
    instance_type="ml.trn1.32xlarge",
    instance_count=args.instance_count,
    distribution={"torch_distributed": {"enabled": True}},
    hyperparameters=hp,
    environment={"XLA_USE_BF16": "1", "FI_EFA_USE_DEVICE_RDMA": "1"},
)
est.fit({"train": "s3://my-bucket/dolly/train"})
