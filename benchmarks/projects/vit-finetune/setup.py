from setuptools import find_packages, setup

setup(
    name="vitft",
    version="0.3.1",
    description="ViT/ConvNeXt fine-tuning on Trainium",
    package_dir={"": "src"},
    packages=find_packages("src"),
    python_requires=">=3.8",
    install_requires=[
        "optimum-neuron[neuronx]>=0.0.21",
        "torch-neuronx",
        "transformers>=4.38,<4.42",
        "datasets",
        "evaluate",
        "Pillow",
    ],
    entry_points={"console_scripts": ["vitft-train=vitft.train:main"]},
)
