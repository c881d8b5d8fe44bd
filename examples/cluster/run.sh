#!/usr/bin/env bash
# The tutorial's run.sh: three cache nodes, one process each, the API on the
# third, then three concurrent requests for Tom. The nodes keep running until
# Ctrl-C; on exit this script stops exactly the processes it started (by PID)
# and removes its build directory.
set -euo pipefail
cd "$(dirname "$0")/../.."

dir=$(mktemp -d)
pids=()
cleanup() {
	trap - EXIT INT TERM
	if ((${#pids[@]})); then
		kill -TERM "${pids[@]}" 2>/dev/null || true
		wait "${pids[@]}" 2>/dev/null || true
	fi
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

go build -o "$dir/server" ./examples/cluster
"$dir/server" -port=8001 & pids+=($!)
"$dir/server" -port=8002 & pids+=($!)
"$dir/server" -port=8003 -api=127.0.0.1:9999 & pids+=($!)

# Wait (at most 5 s each) until every node and the API answer, instead of
# sleeping blindly; any HTTP answer will do (a 404 for "/" loads nothing).
for port in 8001 8002 8003 9999; do
	for i in $(seq 50); do
		curl -s -o /dev/null "http://127.0.0.1:$port/" && break
		if ((i == 50)); then
			echo "run.sh: nothing answers on 127.0.0.1:$port" >&2
			exit 1
		fi
		sleep 0.1
	done
done

echo ">>> start test"
curl -s "http://127.0.0.1:9999/api?key=Tom" &
curl -s "http://127.0.0.1:9999/api?key=Tom" &
curl -s "http://127.0.0.1:9999/api?key=Tom" &
wait %4 %5 %6
echo
echo ">>> nodes running; try: curl 'http://127.0.0.1:9999/api?key=kkk'   (Ctrl-C to stop)"
wait "${pids[@]}"
