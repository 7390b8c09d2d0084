"""Deploy the compiled pipeline to a SageMaker inf2 endpoint."""
import argparse

import sagemaker
from sagemaker.huggingface.model import HuggingFaceModel

ap = argparse.ArgumentParser()
ap.add_argument("--model-data", required=True, help="s3://.../sdxl_lora_neuron.tar.gz (compiled_dir + code/)")
ap.add_argument("--instance-type", default="ml.inf2.xlarge")
ap.add_argument("--endpoint-name", default="sdxl-lora-inf2")
args = ap.parse_args()

role = sagemaker.get_execution_role()
model = HuggingFaceModel(
    model_data=args.model_data,
    role=role,
    transformers_version="4.36.2",
    pytorch_version="2.1.2",
    py_version="py310",
    model_server_workers=1,
    env={"NEURON_RT_NUM_CORES": "2", "SAGEMAKER_MODEL_SERVER_TIMEOUT": "3600"},
)
predictor = model.deploy(
    initial_instance_count=1,
    instance_type=args.instance_type,
    endpoint_name=args.endpoint_name,
    volume_size=100,
    container_startup_health_check_timeout=1800,
)
print(predictor.predict({"inputs": "a lego astronaut, ikea instructions"}).keys())
