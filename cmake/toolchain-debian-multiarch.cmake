# Shared part of the Debian multiarch toolchain files (toolchain-aarch64.cmake, toolchain-armhf.cmake).
# Expects CMAKE_SYSTEM_NAME, CMAKE_SYSTEM_PROCESSOR, DHTGATE_CROSS_TRIPLET (GNU triplet, also the
# multiarch directory name) and DHTGATE_CROSS_QEMU (the qemu-user program for that CPU).
set(CMAKE_C_COMPILER ${DHTGATE_CROSS_TRIPLET}-gcc)
set(CMAKE_CXX_COMPILER ${DHTGATE_CROSS_TRIPLET}-g++)
set(CMAKE_LIBRARY_ARCHITECTURE ${DHTGATE_CROSS_TRIPLET})

# Debian multiarch: no sysroot; target libraries live in /usr/lib/<triplet> and /lib/<triplet>, which
# CMake searches first thanks to CMAKE_LIBRARY_ARCHITECTURE. Build-host programs (pkg-config, qemu)
# are found on the host.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)

# pkg-config must read the target's .pc files only, never the build host's.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/${DHTGATE_CROSS_TRIPLET}/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# Run target programs (ctest) through qemu-user when it is installed; the multiarch loader and
# libraries under / are what qemu's default prefix finds.
find_program(DHTGATE_QEMU_PROGRAM ${DHTGATE_CROSS_QEMU})
if(DHTGATE_QEMU_PROGRAM)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${DHTGATE_QEMU_PROGRAM})
endif()
