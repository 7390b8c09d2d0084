"""Deploy the compiled Llama to a SageMaker inf2 endpoint with the TGI Neuron container."""
import sagemaker
from sagemaker.huggingface import HuggingFaceModel, get_huggingface_llm_image_uri

role = sagemaker.get_execution_role()
image_uri = get_huggingface_llm_image_uri("huggingface-neuronx", version="0.0.23")

config = {
    "HF_MODEL_ID": "aws-neuron/Llama-2-7b-chat-hf-neuron",
    "HF_NUM_CORES": "2",
    "HF_BATCH_SIZE": "1",
    "HF_SEQUENCE_LENGTH": "2048",
    "HF_AUTO_CAST_TYPE": "fp16",
    "MAX_BATCH_SIZE": "1",
    "MAX_INPUT_LENGTH": "1024",
    "MAX_TOTAL_TOKENS": "2048",
}

model = HuggingFaceModel(role=role, image_uri=image_uri, env=config)
predictor = model.deploy(
    initial_instance_count=1,
    instance_type="ml.inf2.xlarge",
    container_startup_health_check_timeout=1800,
    volume_size=512,
)
print(predictor.predict({"inputs": "What is Trainium?", "parameters": {"max_new_tokens": 64}}))
