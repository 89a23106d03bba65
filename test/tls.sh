#!/bin/sh
# TLS end to end, in the VM (test/vm/run.sh -- sh test/tls.sh), with conf/ccree.cnf (ccree
# preferred through default_properties) pointed at this tree's build/ccree.so. With the
# simulated CryptoCell (test/vm/run.sh -c REV), drivers = ccree as shipped instead of any, and
# the module's counters of each record algorithm's driver must show the bytes too.
#  1. nginx (2 workers; drivers = any, offload-min = 0) serves a 4 MiB file to curl and to
#     openssl s_client (plain OpenSSL) over each suite of the table: the body's digest must
#     match, nginx must log the suite, and the workers' live statistics must show the suite's
#     AES record work in the kernel and none in software (where the kernel refuses: in
#     software, or, where the master does not offload it, nothing: ccree does not offer it).
#     No AF_ALG socket may be shared by two nginx processes.
#  2. The same with fallback = no.
#  3. openssl s_server -rev and s_client, both with ccree: lines sent, reversed, compared.
#  4. Many connections to a worker short of file descriptors: see fd_limit.
# "sh test/tls.sh bench": bulk download throughput with and without the provider (no test);
# "sh test/tls.sh ktls": phase 5 alone; "sh test/tls.sh nginx": phases 1 to 4.
# Needs nginx and curl (sh tools/deps.sh tls) and a build in build/ (or in $CCREE_BUILD,
# e.g. one made for another OpenSSL: test/vm/run.sh -o). CCREE_TLS_CLIENTS: the clients of
# nginx (default "curl s_client"). Under TCG it takes about
# 2.5 minutes, most of it the 35 transfers of 4 MiB (README.md, "Tests": what is slow).
set -eu
cd "$(dirname "$0")/.."
top=$PWD
b=${CCREE_BUILD:-build}
clients=${CCREE_TLS_CLIENTS:-curl s_client}
port=18443 sport=18444 slowport=18445 sndbuf=
T=$(mktemp -d)
chmod 755 "$T" # nginx workers run as nobody
unset OPENSSL_CONF
pass=0 failed=0 master= server=

stop() { [ -z "$1" ] || { kill "$1"; while kill -0 "$1" 2>/dev/null; do sleep 0.1; done; }; }
wmem=$(cat /proc/sys/net/core/wmem_max)
trap 'stop "$master"; stop "$server"; echo "$wmem" >/proc/sys/net/core/wmem_max; rm -rf "$T"' EXIT
ok() { pass=$((pass + 1)); echo "ok    $*"; }
bad() { failed=$((failed + 1)); echo "FAIL  $*"; }
now() { date +%s.%N; }
since() { awk -v t0="$1" -v t1="$(now)" 'BEGIN { printf "%.1f s", t1 - t0 }'; }

# The VM boots with the loopback interface down.
ip -o link show lo | grep -q ',UP' || ip link set lo up

sim=/sys/kernel/debug/ccsim
drivers=any
[ ! -d $sim ] || drivers=ccree

# $T/NAME.cnf: conf/ccree.cnf with this tree's module, $drivers and the sed expressions
# given; it must load ccree (OpenSSL ignores a provider that fails to load).
cnf() {
  name=$1
  shift
  sed -e "/^\[ccree_sect\]$/a module = $top/$b/ccree.so" -e "s/^drivers = .*/drivers = $drivers/" \
      "$@" conf/ccree.cnf >"$T/$name.cnf"
  if ! OPENSSL_CONF=$T/$name.cnf openssl list -providers | grep -q '^  ccree$'; then
    echo "ccree does not load with $T/$name.cnf:"
    OPENSSL_CONF=$T/$name.cnf $b/ccree-info
    exit 1
  fi
}
stats() { echo "s|^# stats = .*|stats = $T/stats-$1|"; }
zero='s/^offload-min = .*/offload-min = 0/'

# proto, suite, the provider algorithm of its records ("-": ChaCha20, not ccree's), and the
# digests its handshake takes from the provider (the suite's, and SHA-256 for the certificate)
suites="1.3 TLS_AES_128_GCM_SHA256 AES-128-GCM SHA2-256
1.3 TLS_AES_256_GCM_SHA384 AES-256-GCM SHA2-256,SHA2-384
1.3 TLS_CHACHA20_POLY1305_SHA256 - SHA2-256
1.2 ECDHE-RSA-AES128-GCM-SHA256 AES-128-GCM SHA2-256
1.2 ECDHE-RSA-AES256-GCM-SHA384 AES-256-GCM SHA2-256,SHA2-384
1.2 ECDHE-RSA-AES128-SHA256 AES-128-CBC SHA2-256
1.2 AES256-SHA AES-256-CBC SHA2-256,SHA1"
tls12=$(echo "$suites" | awk '$1 == "1.2" { printf "%s%s", s, $2; s = ":" }')

# Key and certificate, made with plain OpenSSL.
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -days 2 \
    -keyout "$T/key.pem" -out "$T/cert.pem" 2>/dev/null
mkdir "$T/www"
# Statistics directories as README's /run/ccree: root's, mode 0700 (the workers make their
# files at the fork, before they become nobody).
for d in any strict fd; do install -d -m 700 "$T/stats-$d"; done

# nginx with $T/$1.cnf (none if $1 is empty), $2 workers, main-context lines $3, and
# server-context lines $4 (default: the TLS 1.2 suites of the table).
start_nginx() {
  cat >"$T/nginx.conf" <<EOF
user nobody nogroup;
worker_processes $2;
pid $T/nginx.pid;
env OPENSSL_CONF;
${3:-}
events { worker_connections 256; }
http {
  log_format tls '\$ssl_protocol \$ssl_cipher \$status \$body_bytes_sent';
  access_log $T/access.log tls;
  error_log $T/error.log info;
  client_body_temp_path $T/tmp-body;
  proxy_temp_path $T/tmp-proxy;
  fastcgi_temp_path $T/tmp-fastcgi;
  uwsgi_temp_path $T/tmp-uwsgi;
  scgi_temp_path $T/tmp-scgi;
  keepalive_timeout 0;
  open_file_cache max=8 inactive=1h; # files stay open: a request needs no descriptor
  server {
    listen 127.0.0.1:$port ssl${sndbuf:+ sndbuf=$sndbuf};
    ssl_certificate $T/cert.pem;
    ssl_certificate_key $T/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    ${4:-ssl_ciphers $tls12;}
    root $T/www;
  }
}
EOF
  rm -f "$T/nginx.pid" "$T/error.log"
  if [ -n "$1" ]; then export OPENSSL_CONF="$T/$1.cnf"; fi
  if ! nginx -p "$T" -e "$T/error.log" -c "$T/nginx.conf" 2>"$T/start.err"; then
    unset OPENSSL_CONF
    bad "nginx does not start with '$1': $(cat "$T/start.err")"
    return 1
  fi
  unset OPENSSL_CONF
  while [ ! -s "$T/nginx.pid" ]; do sleep 0.1; done
  master=$(cat "$T/nginx.pid")
  while [ "$(pgrep -c -P "$master")" -lt "$2" ]; do sleep 0.1; done
}
stop_nginx() { stop "$master"; master=; }
workers() { echo $(pgrep -P "$master"); }

# Kernel ops, kernel bytes and software ops of algorithm $2 summed over the processes $3,
# from the live statistics of $T/stats-$1 (read without OPENSSL_CONF: no provider needed).
stats_of() {
  $b/ccree-info --stats "$T/stats-$1" |
    awk -v alg="$2" -v pids=" $3 " 'index(pids, " " $1 " ") && $2 == alg {
      k += $5; b += $6; s += $7 } END { print k + 0, b + 0, s + 0 }'
}

# The bytes the simulated CryptoCell's counters show for driver $1 (0 without the module).
sim_driver_bytes() {
  if [ -f "$sim/$1" ]; then awk '$1 == "bytes" { print $2 }' "$sim/$1"; else echo 0; fi
}

# The driver the provider offloads algorithm $1 to under $T/any.cnf (none: software).
provider_driver() {
  OPENSSL_CONF=$T/any.cnf $b/ccree-info |
    awk -v alg="$1" '/^kernel TLS: / { exit } $1 == alg && $3 == "offload" { print $4 }'
}
# Algorithm $1's driver under $T/any.cnf and the bytes the simulated CryptoCell's counters
# show for it (0 without the module).
sim_bytes() {
  d=$(provider_driver "$1")
  echo "${d:--} $(sim_driver_bytes "$d")"
}

# The algorithms ccree-info offloads under $T/any.cnf in a process run by the command $1
# (default: this shell's, root), each between spaces.
offloads() {
  ${1:-} env OPENSSL_CONF=$T/any.cnf $b/ccree-info |
    awk '/^kernel TLS: / { exit } $3 == "offload" { printf " %s ", $1 }'
}
# Where algorithm $1 runs in a process of user $2 (root, or nobody: what nginx's workers
# become after the fork): "kernel" where ccree-info, run as that user, offloads it and, for
# nobody, root does too (a worker can only lose what its master had); "default" where root
# does not (ccree does not offer it: the default provider runs it); else "software" (ccree
# runs it in software). The kernel decides: Linux 7.3's allowlist is shorter for nobody.
# Asked once (expect_init).
expect_init() {
  root_offloads=$(offloads)
  nobody_offloads=$(offloads "setpriv --reuid=nobody --regid=nogroup --clear-groups")
}
expect_path() {
  case "$root_offloads" in *" $1 "*) ;; *) echo default; return ;; esac
  case "$2:$nobody_offloads" in root:* | *" $1 "*) echo kernel ;; *) echo software ;; esac
}
# The why-not column of algorithm $2 in the processes $3, from $T/stats-$1 (one per process).
stats_why() {
  $b/ccree-info --stats "$T/stats-$1" |
    awk -v alg="$2" -v pids=" $3 " 'index(pids, " " $1 " ") && $2 == alg {
      for (i = 0; i < 8; i++) sub(/^[^ ]+ +/, ""); print }'
}

# The statistics before ($1-$3) and after ($4-$6) show that algorithm $7 did at least $8
# bytes in the kernel and nothing in software; with the simulated CryptoCell, its counters
# of driver $9 before ($10) and after ($12) at least $8 bytes too. Where $13 is "software"
# (expect_path), the reverse: nothing in the kernel, software ops, and a reason ($14); where
# "default", nothing through ccree (the statistics then have no line for it).
offloaded() {
  kops=$(($4 - $1)) kbytes=$(($5 - $2)) swops=$(($6 - $3)) sbytes=$((${12} - ${10}))
  echo "$7 $kops kernel ops, $kbytes kernel bytes, $swops software ops$([ ! -d $sim ] ||
    echo ", $9 $sbytes bytes")$(case ${13} in software) echo ", why not: ${14:-none}" ;;
    default) echo ", not offered by ccree" ;; esac)"
  if [ "${13}" = software ]; then
    [ "$kbytes" -eq 0 ] && [ "$swops" -gt 0 ] && [ -n "${14:-}" ] && [ "${14}" != - ]
  elif [ "${13}" = default ]; then
    [ "$kops" -eq 0 ] && [ "$swops" -eq 0 ]
  else
    [ "$kbytes" -ge "$8" ] && [ "$swops" -eq 0 ] && { [ ! -d $sim ] || [ "$sbytes" -ge "$8" ]; }
  fi
}

# Options pinning TLS $2 and suite $3 for client $1 (curl or s_client).
pin() {
  case $1.$2 in
    curl.1.3) echo "--tlsv1.3 --tls-max 1.3 --tls13-ciphers $3" ;;
    curl.1.2) echo "--tlsv1.2 --tls-max 1.2 --ciphers $3" ;;
    s_client.1.3) echo "-tls1_3 -ciphersuites $3" ;;
    s_client.1.2) echo "-tls1_2 -cipher $3" ;;
  esac
}

# Phases 1 and 2: every suite through nginx under $T/$1.cnf, fetched by curl and s_client
# (s_client sends HTTP/1.0, after which nginx closes; the body is the last $size bytes).
size=$((4 * 1024 * 1024))
head -c "$size" /dev/urandom >"$T/www/big"
want=$(sha256sum <"$T/www/big" | cut -d' ' -f1)
fetch() {
  if [ "$1" = curl ]; then
    curl -sS --fail -k $(pin curl "$2" "$3") "https://127.0.0.1:$port/big"
  else
    printf 'GET /big HTTP/1.0\r\n\r\n' |
      openssl s_client -quiet -connect 127.0.0.1:$port $(pin s_client "$2" "$3") | tail -c "$size"
  fi
}
nginx_matrix() {
  echo "--- nginx, 2 workers, $1.cnf"
  start_nginx "$1" 2 || return 0
  refusals=
  while read -r v suite alg digests <&3; do
    exp=kernel
    [ "$alg" = - ] || exp=$(expect_path "$alg" nobody)
    # fallback = no: the suite is refused where the workers may not offload all it takes
    takes=kernel
    for a in $([ "$alg" = - ] || echo "$alg") $(echo "$digests" | tr , ' '); do
      [ "$(expect_path "$a" nobody)" = kernel ] || takes=$a
    done
    for client in $clients; do
      what="$1 $client TLSv$v $suite:"
      t0=$(now)
      before=$(stats_of "$1" "$alg" "$(workers)") sb=$(sim_bytes "$alg")
      sum=$(fetch $client "$v" "$suite" 2>"$T/client.err" | sha256sum | cut -d' ' -f1)
      logged=$(tail -n1 "$T/access.log")
      if [ "$1" = strict ] && [ $takes != kernel ]; then
        refusals=1
        if [ "$sum" = "$want" ]; then
          bad "$what served, yet the workers may not offload $takes and fallback = no"
        else
          ok "$what refused: the workers may not offload $takes and fallback = no"
        fi
      elif [ "$sum" != "$want" ]; then
        bad "$what wrong body ($(since "$t0")): $(tail -n2 "$T/client.err" | tr '\n' ' ')"
      elif [ "$logged" != "TLSv$v $suite 200 $size" ]; then
        bad "$what nginx logged '$logged'"
      elif [ "$alg" = - ]; then
        ok "$what body ok ($(since "$t0"))"
      elif r=$(offloaded $before $(stats_of "$1" "$alg" "$(workers)") "$alg" "$size" $sb \
                 $(sim_bytes "$alg") $exp "$(stats_why "$1" "$alg" "$(workers)" | head -n1)"); then
        ok "$what $r ($(since "$t0"))"
      else
        bad "$what $r ($(since "$t0")): wanted $(want_msg $exp $size)"
      fi
    done
  done 3<<EOF
$suites
EOF
}
want_msg() {
  case $1 in
    kernel) echo ">= $2 kernel bytes, no software op" ;;
    software) echo "no kernel byte, software ops, a reason (the kernel refuses offload here)" ;;
    *) echo "nothing through ccree (the master does not offload it, so ccree does not offer it)" ;;
  esac
}

# Socket inodes of process $1 that are in none of /proc/net's TCP, UDP, Unix and netlink
# tables: its AF_ALG sockets (nginx opens no other kind).
alg_sockets() {
  { awk 'FNR > 1 { print $10 }' /proc/net/tcp /proc/net/tcp6 /proc/net/udp /proc/net/udp6 \
        /proc/net/netlink
    awk 'NR > 1 { print $7 }' /proc/net/unix; } | sort -u >"$T/known"
  ls -l "/proc/$1/fd" | sed -n 's/.*socket:\[\([0-9]*\)\]$/\1/p' | sort -u | comm -23 - "$T/known"
}
not_shared() {
  counts= files=
  for p in "$master" $(workers); do
    counts="$counts $(alg_sockets "$p" | tee "$T/alg.$p" | wc -l)"
    files="$files $T/alg.$p"
  done
  shared=$(sort $files | uniq -d | wc -l)
  what="AF_ALG sockets in the master and the workers:$counts, $shared shared"
  if [ "$shared" -eq 0 ]; then ok "$what"; else bad "$what"; fi
}

# nginx's own view: no crash, and no handshake failure unless $1 is set (fallback = no met an
# algorithm the kernel refuses).
clean_log() {
  pat='exited on signal|\[(alert|emerg)\]'
  [ -n "${1:-}" ] || pat="SSL_do_handshake|$pat"
  if grep -E "$pat" "$T/error.log" >"$T/err"; then
    bad "nginx error log: $(head -n3 "$T/err" | tr '\n' ' ')"
  else
    ok "nginx error log: no handshake failure, no crash"
  fi
}

# Phase 3: s_server -rev sends back each line reversed; both ends under any.cnf.
server_matrix() {
  echo "--- openssl s_server -rev and s_client, both with any.cnf"
  head -c 1000000 /dev/urandom | base64 -w 4096 >"$T/lines"
  perl -lne 'print scalar reverse' "$T/lines" >"$T/reversed"
  bytes=$(($(wc -c <"$T/lines") * 2))
  OPENSSL_CONF=$T/any.cnf openssl s_server -rev -accept 127.0.0.1:$sport -cert "$T/cert.pem" \
      -key "$T/key.pem" -cipher "$tls12" >"$T/server.out" 2>"$T/server.err" &
  server=$!
  until grep -q ACCEPT "$T/server.out"; do sleep 0.1; done
  while read -r v suite alg _ <&3; do
    what="s_server/s_client TLSv$v $suite:"
    exp=kernel
    [ "$alg" = - ] || exp=$(expect_path "$alg" root)
    t0=$(now)
    before=$(stats_of any "$alg" "$server") sb=$(sim_bytes "$alg")
    { cat "$T/lines"; echo CLOSE; } | OPENSSL_CONF=$T/any.cnf \
        openssl s_client -quiet -connect 127.0.0.1:$sport $(pin s_client "$v" "$suite") \
        >"$T/back" 2>"$T/client.err" || true
    if ! cmp -s "$T/back" "$T/reversed"; then
      bad "$what lines not sent back ($(since "$t0")): $(tail -n2 "$T/client.err" | tr '\n' ' ')"
    elif [ "$(grep '^Ciphersuite:' "$T/server.err" | tail -n1)" != "Ciphersuite: $suite" ]; then
      bad "$what the server did not log the suite"
    elif [ "$alg" = - ]; then
      ok "$what lines back ($(since "$t0"))"
    elif r=$(offloaded $before $(stats_of any "$alg" "$server") "$alg" "$bytes" $sb \
               $(sim_bytes "$alg") $exp "$(stats_why any "$alg" "$server")"); then
      ok "$what $r in the server ($(since "$t0"))"
    else
      bad "$what $r in the server ($(since "$t0")): wanted $(want_msg $exp $bytes)"
    fi
  done 3<<EOF
$suites
EOF
  stop "$server"
  server=
}

# Phase 4: a worker allowed 2 descriptors more than it holds idle. A connection takes one
# for its TCP socket, so the provider has at most one left for the AF_ALG sockets each
# connection's record contexts, digests and key derivation want: it runs out on every
# connection and must go on in software. nginx still accepts (a refused accept is retried),
# and every handshake and transfer must succeed; the statistics must show software work (none
# where ccree does not offer AES-128-GCM: the default provider's).
fd_limit() {
  n=32 par=2
  head -c 65536 /dev/urandom >"$T/www/small"
  small=$(sha256sum <"$T/www/small" | cut -d' ' -f1)
  start_nginx fd 1 || return 0
  curl -sSk -o /dev/null "https://127.0.0.1:$port/small" # the worker's lasting descriptors
  sleep 1
  idle=$(ls "/proc/$(workers)/fd" | wc -l)
  stop_nginx
  start_nginx fd 1 "worker_rlimit_nofile $((idle + 2));" || return 0
  echo "--- nginx, 1 worker limited to $((idle + 2)) descriptors; $n connections, $par at a time"
  t0=$(now)
  before=$(stats_of fd AES-128-GCM "$(workers)")
  curl -sS --no-progress-meter -k --parallel --parallel-max $par \
       $(pin curl 1.3 TLS_AES_128_GCM_SHA256) --create-dirs -o "$T/many/#1" \
       "https://127.0.0.1:$port/small?[1-$n]" 2>"$T/client.err" || true
  set -- $before $(stats_of fd AES-128-GCM "$(workers)")
  good=$(sha256sum "$T/many"/* 2>/dev/null | grep -c "^$small ") || true
  what="$good of $n transfers right, AES-128-GCM $(($4 - $1)) kernel ops, $(($6 - $3)) software"
  what="$what ops, $(grep -c 'Too many open files' "$T/error.log") refused accepts ($(since "$t0"))"
  gcm=$(expect_path AES-128-GCM root)
  if [ "$good" -eq $n ] && if [ $gcm = default ]; then [ $(($4 + $6 - $1 - $3)) -eq 0 ]
                           else [ $(($6 - $3)) -gt 0 ]; fi; then
    ok "$what"
  else
    bad "$what: wanted every transfer and $([ $gcm = default ] && echo "no ccree op" ||
      echo "software ops"); $(tail -n2 "$T/client.err")"
  fi
  clean_log
  stop_nginx
}

# Phase 5: kernel TLS. nginx with "ssl_conf_command Options KTLS" and sendfile serves each
# kTLS suite; after the handshake libssl hands the keys to the kernel's tls module, which
# encrypts the records with the implementation the crypto API prefers (ccree-info's kernel TLS
# table: with the simulated CryptoCell, its *-ccree driver). The body must be right, nginx must
# log the suite, the kernel's TlsTxSw counter must grow, the records must not pass through the
# provider (the workers' statistics of the suite's algorithm grow by less than the body) and,
# with the simulated CryptoCell, its counters of the driver ccree-info names must grow by the
# body at least. The clients run in user space with plain OpenSSL.
# proto, suite, algorithm, where its records go: OpenSSL keeps TLS 1.3 CCM out of kTLS
# (ssl/ktls.c: "broken on 5.x kernels"), so those stay in user space, through the provider;
# ChaCha20-Poly1305 is not CryptoCell's (the kernel's software runs it).
# OpenSSL 3.0 and 3.1 keep TLS 1.3 AES-128-CCM out of kTLS (ssl/ktls.c); 3.2's record layer
# (ssl/record/methods/ktls_meth.c) does not.
ccm13=kernel
openssl version | awk '{ split($2, v, "."); exit !(v[1] == 3 && v[2] < 2) }' && ccm13=user
ktls_suites="1.3 TLS_AES_128_GCM_SHA256 AES-128-GCM kernel
1.3 TLS_AES_256_GCM_SHA384 AES-256-GCM kernel
1.3 TLS_AES_128_CCM_SHA256 AES-128-CCM $ccm13
1.2 ECDHE-RSA-AES128-GCM-SHA256 AES-128-GCM kernel
1.2 ECDHE-RSA-AES256-GCM-SHA384 AES-256-GCM kernel
1.2 AES128-CCM AES-128-CCM kernel
1.3 TLS_CHACHA20_POLY1305_SHA256 ChaCha20-Poly1305 kernel
1.2 ECDHE-RSA-CHACHA20-POLY1305 ChaCha20-Poly1305 kernel"
# The kernel TLS part of ccree-info under $T/any.cnf: counter $1's value (0 before the tls
# module is loaded), or with -d, the driver the kernel takes for cipher $2, with -c whether
# it completes sync or async.
ktls_info() {
  OPENSSL_CONF=$T/any.cnf $b/ccree-info |
    awk -v k="$1" -v c="${2:-}" '/^kernel TLS: / { on = 1 } on && c != "" && $1 == c { print k == "-d" ? $3 : $5 }
                                 on && $1 == k { n = $2 } END { if (c == "") print n + 0 }'
}
# The bytes of a body that must pass through the provider in user space for algorithm $1: all
# where it offloads $1 under $T/any.cnf, none where it does not (it does not offer $1).
through() { if [ -n "$(provider_driver "$1")" ]; then echo "$size"; else echo 0; fi; }
# Whether $1 bytes through the provider are what through() said ($2): at least them, or none.
as_through() { [ "$1" -ge "$2" ] && { [ "$2" -gt 0 ] || [ "$1" -eq 0 ]; }; }
# The bytes of algorithm $1 that passed through the provider, kernel and software, in the
# processes $2 (from $T/stats-any).
provider_bytes() {
  $b/ccree-info --stats "$T/stats-any" |
    awk -v alg="$1" -v pids=" $2 " 'index(pids, " " $1 " ") && $2 == alg { b += $6 + $8 }
                                    END { print b + 0 }'
}
# A client slower than nginx, on a listener with a 32 KiB send buffer: curl reads at 1 MiB/s.
# The body must be right, or, with an asynchronous driver, a right beginning of it with curl
# failing: the kTLS of Linux 7.2 and 7.3 (not of 6.1 nor 6.12, measured) can accept more of a
# sendfile than the socket has room for when the records complete asynchronously (net/tls
# queues them), and drops what is still queued when nginx then closes the socket; the client
# sees the body cut short, without close_notify. A synchronous driver makes sendfile wait.
slow_reader() {
  v=1.2 suite=$1 alg=$2
  d=$(ktls_info -d "$alg") completes=$(ktls_info -c "$alg")
  what="kTLS curl TLSv$v $suite at 1 MiB/s, $d ($completes):"
  curl -sS --fail -k $(pin curl $v "$suite") --limit-rate 1M "https://127.0.0.1:$slowport/big" \
      -o "$T/slow" 2>"$T/client.err" && rc=0 || rc=$?
  got=$(stat -c %s "$T/slow")
  if [ "$got" -eq "$size" ] && [ "$rc" -eq 0 ] && cmp -s "$T/slow" "$T/www/big"; then
    ok "$what the body"
  elif [ "$completes" = async ] && [ "$got" -lt "$size" ] && [ "$rc" -ne 0 ] &&
       cmp -s -n "$got" "$T/slow" "$T/www/big"; then
    ok "$what the body cut short by Linux's kTLS, $((size - got)) bytes before its end: $(
      tail -n1 "$T/client.err")"
  else
    bad "$what $got bytes, curl status $rc: $(tail -n1 "$T/client.err"); wanted the body$(
      [ "$completes" != async ] || echo ", or a right beginning of it with curl failing")"
  fi
}
ktls_matrix() {
  echo "--- nginx with kTLS and sendfile, 2 workers, any.cnf"
  ciphers=$(echo "$ktls_suites" | awk '$1 == "1.2" { printf "%s%s", s, $2; s = ":" }')
  suites13=$(echo "$ktls_suites" | awk '$1 == "1.3" { printf "%s%s", s, $2; s = ":" }')
  # The transfers of the table get a send buffer that holds the whole body, so that kTLS can
  # drop none of it at the close (see slow_reader).
  echo $((4 * size)) >/proc/sys/net/core/wmem_max
  sndbuf=$((2 * size))
  start_nginx any 2 "" "ssl_ciphers $ciphers; ssl_conf_command Ciphersuites $suites13;
    ssl_conf_command Options KTLS; sendfile on; listen 127.0.0.1:$slowport ssl sndbuf=32k;" ||
    return 0
  sndbuf=
  # Without the tls module, which workers running as nobody cannot load, the records stay in
  # user space, through the provider where it offers AES-128-GCM; ccree-info says why.
  if [ ! -e /proc/net/tls_stat ]; then
    through=$(through AES-128-GCM)
    pb=$(provider_bytes AES-128-GCM "$(workers)")
    sum=$(fetch curl 1.3 TLS_AES_128_GCM_SHA256 2>"$T/client.err" | sha256sum | cut -d' ' -f1)
    dprov=$(($(provider_bytes AES-128-GCM "$(workers)") - pb))
    why=$(OPENSSL_CONF=$T/any.cnf $b/ccree-info | sed -n 's/^kernel TLS: //p')
    what="kTLS without the tls module: $why; provider AES-128-GCM +$dprov bytes"
    if [ "$sum" = "$want" ] && [ ! -e /proc/net/tls_stat ] && as_through "$dprov" "$through" &&
       [ "$why" != "${why#tls module not loaded}" ]; then
      ok "$what"
    else
      bad "$what: wanted the body, no tls module, $through or more bytes in the provider, the reason"
    fi
    modprobe tls # README, nginx: loaded at boot
  fi
  while read -r v suite alg where <&3; do
    for client in $clients; do
      what="kTLS $client TLSv$v $suite, records in $where space:"
      t0=$(now)
      # The driver whose simulated counters must show the records, if any: kTLS's for an AES
      # suite in the kernel; in user space, the provider's where it offloads the algorithm.
      if [ $where = kernel ]; then d=$(ktls_info -d "$alg"); else d=$(provider_driver "$alg"); fi
      need=
      [ ! -d $sim ] || [ "$alg" = ChaCha20-Poly1305 ] || { [ $where = user ] && [ -z "$d" ]; } ||
        need=1
      tx=$(ktls_info TlsTxSw)
      pb=$(provider_bytes "$alg" "$(workers)") sb=$(sim_driver_bytes "$d") through=$(through "$alg")
      sum=$(fetch $client "$v" "$suite" 2>"$T/client.err" | sha256sum | cut -d' ' -f1)
      logged=$(tail -n1 "$T/access.log")
      dtx=$(($(ktls_info TlsTxSw) - tx)) dprov=$(($(provider_bytes "$alg" "$(workers)") - pb))
      dsim=$(($(sim_driver_bytes "$d") - sb))
      r="TlsTxSw +$dtx, provider $alg +$dprov bytes$([ -z "$need" ] || echo ", $d +$dsim bytes")"
      # kernel: a kTLS session, not the provider; user: the provider where it offers $alg (else
      # the default provider), no kTLS session.
      if [ $where = kernel ]; then
        [ "$dtx" -ge 1 ] && [ "$dprov" -lt "$size" ]
      else
        [ "$dtx" -eq 0 ] && as_through "$dprov" "$through"
      fi && path=ok || path=
      if [ "$sum" != "$want" ]; then
        bad "$what wrong body ($(since "$t0")): $(tail -n2 "$T/client.err" | tr '\n' ' ')"
        grep -v ' \[info\] ' "$T/error.log" | tail -n3
      elif [ "$logged" != "TLSv$v $suite 200 $size" ]; then
        bad "$what nginx logged '$logged'"
      elif [ -n "$path" ] &&
           { [ -z "$need" ] || { [ "$d" != "${d%-ccree}" ] && [ "$dsim" -ge "$size" ]; }; }; then
        ok "$what $r ($(since "$t0"))"
      else
        bad "$what $r ($(since "$t0")): wanted $([ $where = kernel ] &&
          echo "TlsTxSw +1, provider < $size bytes" || echo "TlsTxSw +0, provider >= $through bytes")$(
          [ -z "$need" ] || echo ", a *-ccree driver with >= $size bytes")"
      fi
    done
  done 3<<EOF
$ktls_suites
EOF
  slow_reader ECDHE-RSA-AES128-GCM-SHA256 AES-128-GCM
  slow_reader ECDHE-RSA-CHACHA20-POLY1305 ChaCha20-Poly1305
  OPENSSL_CONF=$T/any.cnf $b/ccree-info | sed -n '/^kernel TLS: /,$p'
  clean_log
  stop_nginx
}

# Bulk throughput, MB/s: the best of 3 downloads of 32 MiB with curl, from nginx with plain
# OpenSSL, with ccree (its records where offload-min = auto sends them), and with kTLS (plain
# OpenSSL; the records in the kernel's preferred gcm(aes)); with the simulated CryptoCell
# (run.sh -c), kTLS again with the module loaded (its gcm-aes-ccree) and the other rows without
# it. The servers take turns, so that load from elsewhere on the machine falls on all alike.
bench() {
  head -c $((32 * 1024 * 1024)) /dev/urandom >"$T/www/bulk"
  modprobe tls
  ktls="ssl_ciphers $tls12; ssl_conf_command Options KTLS; sendfile on;"
  cfgs="plain ccree ktls" rev=
  [ ! -d $sim ] || { rev=$(cat /sys/module/ccsim/parameters/rev); cfgs="ktls-sim $cfgs"; }
  for run in 1 2 3; do
    [ -z "$rev" ] || [ -d $sim ] || insmod /run/ccree-vm/ccsim.ko rev="$rev"
    for cfg in $cfgs; do
      case $cfg in
        plain) start_nginx "" 1 ;;
        ccree) start_nginx bench 1 ;;
        ktls*) start_nginx "" 1 "" "$ktls" ;;
      esac
      for v in 1.3 1.2; do
        suite=$(echo "$suites" | awk -v v="$v" '$1 == v && $3 == "AES-128-GCM" { print $2 }')
        curl -sS --fail -k $(pin curl "$v" "$suite") -o /dev/null -w "$v $cfg %{speed_download}\n" \
             "https://127.0.0.1:$port/bulk" |
          awk '{ printf "TLSv%s %s: %.1f MB/s\n", $1, $2, $3 / 1e6; print $1, $2, $3 / 1e6 >>f }' \
              f="$T/speeds"
      done
      stop_nginx
      [ $cfg != ktls-sim ] || rmmod ccsim
    done
  done
  echo "bulk download of 32 MiB by curl from nginx, best of 3, MB/s; ratios to plain"
  echo "plain: OpenSSL's default provider; ccree: drivers = $drivers, offload-min at its default$(
    [ -z "$rev" ] || echo " (the module removed: software)")"
  echo "ktls: plain OpenSSL with kTLS$([ -z "$rev" ] ||
    echo "; ktls-sim: the same, the kernel's gcm(aes) on the simulated CryptoCell $rev")"
  awk -v cfgs="plain ccree ktls${rev:+ ktls-sim}" '$3 > s[$1 " " $2] { s[$1 " " $2] = $3 } END {
         n = split(cfgs, c, " "); printf "%-8s %-12s", "TLS", "suite"
         for (j = 1; j <= n; j++) printf " %9s %6s", c[j], "ratio"
         printf "\n"
         for (i = 0; i < 2; i++) { v = i ? "1.2" : "1.3"; p = s[v " plain"]
           printf "%-8s %-12s", "TLSv" v, "AES-128-GCM"
           for (j = 1; j <= n; j++) printf " %9.1f %6.2f", s[v " " c[j]], s[v " " c[j]] / p
           printf "\n" } }' "$T/speeds"
}

if [ "${1:-}" = bench ]; then
  cnf bench
  bench
  exit 0
fi
cnf any -e "$zero" -e "$(stats any)"
if [ "${1:-}" = ktls ]; then
  ktls_matrix
  echo "$pass passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
fi
cnf strict -e "$zero" -e "$(stats strict)" -e 's/^fallback = .*/fallback = no/'
cnf fd -e "$zero" -e "$(stats fd)"
expect_init
start=$(now)
for c in any strict; do
  nginx_matrix $c
  if [ -n "$master" ]; then
    [ $c = strict ] || not_shared
    clean_log "$refusals"
    stop_nginx
  fi
done
server_matrix
fd_limit
[ "${1:-}" = nginx ] || ktls_matrix
echo "tls.sh took $(since "$start")"
echo "$pass passed, $failed failed"
[ "$failed" -eq 0 ]
