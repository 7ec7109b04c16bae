#!/usr/bin/env bash
# Provisions dcnlab's Vagrant lab (the Vagrantfile runs it as root at `vagrant up` and `vagrant provision`):
# p4c, BMv2 (with PI) and Mininet from p4lang's packages for this Ubuntu release, then ./setup in the
# checkout that the VM shares (default /vagrant). Idempotent.
#   sudo vagrant/provision.sh [CHECKOUT]
set -euo pipefail
checkout=${1:-/vagrant}
export DEBIAN_FRONTEND=noninteractive

fail() { echo "provision.sh: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "run it as root (the Vagrantfile does)"
[ -x "$checkout/setup" ] || fail "$checkout/setup not found: CHECKOUT is dcnlab's checkout (default /vagrant)"
# shellcheck source=/dev/null
. /etc/os-release
[ "${ID:-}" = ubuntu ] || fail "${PRETTY_NAME:-this system} is not Ubuntu (the lab's boxes are Ubuntu 24.04 and 22.04)"

# ./setup keeps its venv in the checkout, which the VM shares with the host: a .venv made by another
# Python (the host's, or another box's: 24.04 has 3.12, 22.04 has 3.10) is not this box's to change.
python=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
cfg="$checkout/.venv/pyvenv.cfg"
if [ -f "$cfg" ]; then
  home=$(sed -n 's/^home *= *//p' "$cfg" | head -n 1)
  made=$(sed -n 's/^version\(_info\)\{0,1\} *= *\([0-9]*\.[0-9]*\).*/\2/p' "$cfg" | head -n 1)
  if [ "$home" != /usr/bin ] || [ "$made" != "$python" ]; then
    fail "$checkout/.venv belongs to Python ${made:-?} in ${home:-?}, this box has /usr/bin/python3 $python:" \
         "move it away (mv .venv .venv-${made:-old}) and run 'vagrant provision'"
  fi
fi

# p4lang's OBS repository (the route recommended by the p4lang/behavioral-model and p4lang/p4c READMEs)
if [ ! -f /etc/apt/sources.list.d/home-p4lang.list ]; then
  apt-get update -qq
  apt-get install -y -qq curl gnupg ca-certificates
  repo="https://download.opensuse.org/repositories/home:/p4lang/xUbuntu_${VERSION_ID}"
  curl -fsSL "$repo/Release.key" | gpg --dearmor > /etc/apt/trusted.gpg.d/home_p4lang.gpg
  echo "deb $repo/ /" > /etc/apt/sources.list.d/home-p4lang.list
fi
apt-get update -qq
apt-get install -y -qq p4lang-p4c p4lang-bmv2 p4lang-pi mininet python3-venv python3-dev
for tool in simple_switch_grpc simple_switch_CLI p4c; do
  command -v "$tool" > /dev/null || fail "$tool is not on PATH after installing p4lang's packages"
done

# p4lang-pi installs PI's google/__init__.py, google/rpc and p4 into a system site directory, where a
# regular `google` hides protobuf's namespace package; ./setup's venv does not see the system's site
# directories, only Debian's mininet (setup-venv; a .venv of an older ./setup is switched over).
cd "$checkout"
./setup
.venv/bin/python -c 'import google.protobuf, finsy.proto, mininet.net, dcnlab.controller.runtime'
echo "provision.sh: ok ($PRETTY_NAME, $(.venv/bin/python --version))"
