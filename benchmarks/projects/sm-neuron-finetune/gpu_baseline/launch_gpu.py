from sagemaker.huggingface import HuggingFace

est = HuggingFace(
    entry_point="train_gpu.py",
    source_dir=".",
    instance_type="ml.g5.12xlarge",
    instance_count=1,
    transformers_version="4.36",
    pytorch_version="2.1",
    py_version="py310",
    role="arn:aws:iam::111122223333:role/sagemaker",
    hyperparameters={"epochs": 3, "bf16": True},
)
est.fit({"train": "s3://my-bucket/llama-data/train"})
