from setuptools import find_packages, setup

setup(
    name="trainkit",
    version="0.3.1",
    package_dir={"": "src"},
    packages=find_packages("src"),
    python_requires=">=3.8",
    install_requires=[
        "torch==2.1.2",
        "torch-xla==2.1.*",
        "torch-neuronx==2.1.2.2.3.0",
        "transformers>=4.36,<4.42",
    ],
    extras_require={"dev": ["pytest", "neuronx-cc==2.*"]},
)
