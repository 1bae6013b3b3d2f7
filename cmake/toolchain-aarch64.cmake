# CMake toolchain file: cross-compile dhtgate for 64-bit ARM (Debian arm64) on a Debian host with
# multiarch, as docker/Dockerfile.cross sets it up:
#   dpkg --add-architecture arm64 && apt-get install crossbuild-essential-arm64 libopendht-dev:arm64 ...
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake
# Libraries and .pc files come from /usr/lib/aarch64-linux-gnu (multiarch, no separate sysroot); the
# headers in /usr/include are shared by every architecture. When qemu-aarch64 is installed (Debian:
# qemu-user), ctest runs the test binary through it.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(DHTGATE_CROSS_TRIPLET aarch64-linux-gnu)
set(DHTGATE_CROSS_QEMU qemu-aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-debian-multiarch.cmake)
