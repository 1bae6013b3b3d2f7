#!/bin/sh
# Generates the autotools build (configure, Makefile.in) from configure.ac, Makefile.am and m4/.
# First writes sources.am, the list of source files (build-aux/gen-sources.sh), since automake has no
# wildcards. Then: ./configure && make (or out of tree: mkdir b && cd b && ../configure && make).
# Needs autoconf >= 2.69, automake >= 1.14, libtool and pkg-config (pkg.m4).
set -eu
cd "$(dirname "$0")"
sh build-aux/gen-sources.sh . sources.am
autoreconf --force --install "$@"
echo "autogen.sh: done; now ./configure (see ./configure --help and docs/build.md)"
