"""Launch layer rules (NM4xx): shell/sbatch/Makefiles, Dockerfiles, YAML manifests, argument-parser configs and command strings in Python."""
