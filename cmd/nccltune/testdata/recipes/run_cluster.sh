#!/bin/bash
# A stand-in for vLLM's examples/online_serving/run_cluster.sh with its
# interface: IMAGE HEAD_IP --head|--worker HF_HOME [docker run args...].
# Like the real script, it hands the extra arguments to docker run as it
# was given them ("$@"), so what reaches docker is what the recipe's
# shell made of $FLAGS.
if [ $# -lt 4 ]; then
	echo "usage: $0 image head_ip --head|--worker hf_home [docker run args...]" >&2
	exit 1
fi
image=$1 head=$2 role=$3 hf=$4
shift 4
case $role in
--head) start="ray start --block --head --node-ip-address=$head --port=6379" ;;
--worker) start="ray start --block --address=$head:6379" ;;
*) echo "the node type must be --head or --worker" >&2; exit 1 ;;
esac
exec docker run --entrypoint /bin/bash --network host --name "node-$$" --shm-size 10.24g --gpus all \
	-v "$hf:/root/.cache/huggingface" "$@" "$image" -c "$start"
