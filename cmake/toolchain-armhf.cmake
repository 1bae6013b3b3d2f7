# CMake toolchain file: cross-compile dhtgate for 32-bit ARM hard-float (Debian armhf) on a Debian host
# with multiarch (see toolchain-aarch64.cmake and docker/Dockerfile.cross):
#   cmake -S . -B build-armhf -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-armhf.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7l)
set(DHTGATE_CROSS_TRIPLET arm-linux-gnueabihf)
set(DHTGATE_CROSS_QEMU qemu-arm)
# GCC notes every std:: type whose argument passing changed in GCC 7.1 on ARM; irrelevant here (no ABI
# mixing with pre-7 objects), and the volume buries real warnings.
set(CMAKE_CXX_FLAGS_INIT "-Wno-psabi")
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-debian-multiarch.cmake)
