# Sourced by the benchmarks that serve loopback traffic from a private
# nginx (experiment_cost.sh, soft_home.sh).

# free_port: a TCP port free on 127.0.0.1 when asked.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# nginx_conf DIR WORKERS PORT BODY [HTTP_LINE...]: writes DIR/nginx.conf,
# nginx with WORKERS reuseport workers on 127.0.0.1:PORT answering BODY, no
# access log, its pid in DIR/nginx.pid; each HTTP_LINE goes into http {}.
nginx_conf() {
  local dir=$1 workers=$2 port=$3 body=$4 line
  shift 4
  {
    echo "worker_processes $workers;"
    echo "pid $dir/nginx.pid;"
    echo "error_log $dir/error.log;"
    echo "events { worker_connections 1024; }"
    echo "http {"
    echo "  access_log off;"
    for line in "$@"; do echo "  $line"; done
    echo "  server {"
    echo "    listen 127.0.0.1:$port reuseport;"
    echo "    location / { return 200 \"$body\\n\"; }"
    echo "  }"
    echo "}"
  } >"$dir/nginx.conf"
}
