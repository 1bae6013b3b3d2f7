# dhtgate_compiler.m4 - compiler setup for dhtgate, mirroring CMakeLists.txt.

# DHTGATE_CXX17
#   Makes $CXX compile C++17 without GNU extensions (CMake: CXX_STANDARD 17, CXX_EXTENSIONS OFF) by
#   adding -std=c++17 to CXX when the compiler is not in that mode already. Fails otherwise.
AC_DEFUN([DHTGATE_CXX17], [
  AC_REQUIRE([AC_PROG_CXX])
  AC_LANG_PUSH([C++])
  AC_CACHE_CHECK([for $CXX option to select ISO C++17], [dhtgate_cv_cxx17], [
    dhtgate_cv_cxx17=no
    dhtgate_save_CXX=$CXX
    for dhtgate_opt in -std=c++17 -std=c++1z; do
      CXX="$dhtgate_save_CXX $dhtgate_opt"
      AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[
#include <optional>
#include <string_view>
#if __cplusplus < 201703L
#error not C++17
#endif
template <typename... T> constexpr auto sum(T... t) { return (t + ...); }
]], [[
  if constexpr (sum(1, 2) == 3) { std::optional<std::string_view> v{"x"}; return v->size() == 1 ? 0 : 1; }
]])], [dhtgate_cv_cxx17=$dhtgate_opt])
      CXX=$dhtgate_save_CXX
      test "x$dhtgate_cv_cxx17" != xno && break
    done])
  AS_IF([test "x$dhtgate_cv_cxx17" = xno],
    [AC_MSG_ERROR([$CXX cannot compile C++17; use GCC >= 8 or Clang >= 7])])
  dnl In CXX rather than CXXFLAGS so that a user's CXXFLAGS=... cannot drop it (like AX_CXX_COMPILE_STDCXX),
  dnl replacing the -std=gnu++11 that AC_PROG_CXX (autoconf >= 2.70) may have added.
  CXX=`AS_ECHO(["$CXX"]) | sed 's/ -std=[[^ ]]*//g'`
  CXX="$CXX $dhtgate_cv_cxx17"
  AC_LANG_POP([C++])
])

# DHTGATE_CHECK_PTHREAD
#   Sets and substitutes PTHREAD_CFLAGS/PTHREAD_LIBS (-pthread when the compiler takes it).
AC_DEFUN([DHTGATE_CHECK_PTHREAD], [
  AC_LANG_PUSH([C++])
  AC_CACHE_CHECK([whether $CXX accepts -pthread], [dhtgate_cv_pthread], [
    dhtgate_save_CXXFLAGS=$CXXFLAGS
    CXXFLAGS="$CXXFLAGS -pthread"
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <thread>]], [[std::thread t([]{}); t.join();]])],
      [dhtgate_cv_pthread=yes], [dhtgate_cv_pthread=no])
    CXXFLAGS=$dhtgate_save_CXXFLAGS])
  AS_IF([test "x$dhtgate_cv_pthread" = xyes],
    [PTHREAD_CFLAGS=-pthread; PTHREAD_LIBS=-pthread],
    [PTHREAD_CFLAGS=; PTHREAD_LIBS=-lpthread])
  AC_SUBST([PTHREAD_CFLAGS])
  AC_SUBST([PTHREAD_LIBS])
  AC_LANG_POP([C++])
])

# DHTGATE_CHECK_CXXFLAG(FLAG, ACTION-IF-ACCEPTED, [ACTION-IF-NOT])
#   Whether $CXX accepts FLAG (with -Werror, so that an unknown warning option is not silently taken).
AC_DEFUN([DHTGATE_CHECK_CXXFLAG], [
  AS_VAR_PUSHDEF([dhtgate_flag_var], [dhtgate_cv_cxxflag_$1])
  AC_CACHE_CHECK([whether $CXX accepts $1], [dhtgate_flag_var], [
    dhtgate_save_CXXFLAGS=$CXXFLAGS
    CXXFLAGS="$CXXFLAGS -Werror $1"
    AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])],
      [AS_VAR_SET([dhtgate_flag_var], [yes])], [AS_VAR_SET([dhtgate_flag_var], [no])])
    CXXFLAGS=$dhtgate_save_CXXFLAGS])
  AS_VAR_IF([dhtgate_flag_var], [yes], [$2], [$3])
  AS_VAR_POPDEF([dhtgate_flag_var])
])
