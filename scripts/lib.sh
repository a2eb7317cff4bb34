# Helpers sourced by scripts/run, scripts/test and friends (bash).
#
#   . scripts/lib.sh
#   jl_install_deps          # Debian packages the build needs; no-op when present
#   jl_build [MESON_OPT...]  # meson setup (or --reconfigure) + ninja in $JOSTLE_BUILD_DIR
#
# JOSTLE_BUILD_DIR: build folder, relative to the repository root (default: build).
# JOSTLE_BUILD_TARGETS: ninja targets to build (default: all).

JL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# The Debian packages jostle needs to build, test and plot; python3-* build
# and test the Python package (python3-venv for its pip install test); g++ and
# libbullet-dev build bench/bullet_driver for scripts/bench-peers.
JL_DEPS=(meson ninja-build pkg-config gcc libcjson-dev libcmocka-dev libnlopt-dev
         libassimp-dev libfclib-dev python3-matplotlib
         libopenmpi-dev openmpi-bin
         python3-dev python3-numpy python3-pytest python3-venv
         g++ libbullet-dev)

jl_say() { echo "jostle: $*"; }

# nvcc is optional; make it visible to meson when the toolkit is installed.
jl_cuda_path() {
  if [ -x /usr/local/cuda/bin/nvcc ]; then
    case ":$PATH:" in
      *:/usr/local/cuda/bin:*) ;;
      *) PATH=/usr/local/cuda/bin:$PATH; export PATH ;;
    esac
  fi
}

jl_install_deps() {
  local missing=() p
  for p in "${JL_DEPS[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$p")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo)
    else
      echo "jostle: missing packages (${missing[*]}) and not root, no sudo" >&2
      return 1
    fi
  fi
  jl_say "installing ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# jl_build [MESON_OPT...]: configures with -Dcuda=auto unless an option sets cuda.
jl_build() {
  local dir=${JOSTLE_BUILD_DIR:-build} opts=() a has_cuda=0
  for a in "$@"; do
    case $a in -Dcuda=*) has_cuda=1 ;; esac
  done
  [ $has_cuda -eq 1 ] || opts+=(-Dcuda=auto)
  opts+=("$@")
  jl_cuda_path
  (
    cd "$JL_ROOT" || exit 1
    if [ -f "$dir/meson-private/coredata.dat" ]; then
      jl_say "reconfiguring $dir/"
      meson setup --reconfigure "$dir" "${opts[@]}" || exit 1
    else
      jl_say "configuring $dir/"
      meson setup "$dir" "${opts[@]}" || exit 1
    fi
    jl_say "building in $dir/"
    # shellcheck disable=SC2086
    ninja -C "$dir" ${JOSTLE_BUILD_TARGETS:-}
  )
}
