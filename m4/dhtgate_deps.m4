# dhtgate_deps.m4 - dependency checks for dhtgate (the same set CMakeLists.txt looks for).
#
# DHTGATE_CHECK_DEPS
#   pkg-config: opendht, gnutls, fmt, openssl (and cppunit when the tests are enabled, see
#   DHTGATE_CHECK_TEST_DEPS). Headers/libraries without a .pc file: http_parser, restinio, msgpack-c, asio.
#   Substitutes <NAME>_CFLAGS / <NAME>_LIBS for each, and HTTP_PARSER_LIBS.
#   Must be called with AC_LANG([C++]) in effect, after DHTGATE_CXX17 (restinio needs C++14 at least).
AC_DEFUN([DHTGATE_CHECK_DEPS], [
  PKG_PROG_PKG_CONFIG([0.29])
  PKG_CHECK_MODULES([OPENDHT], [opendht >= 2.4], [],
    [AC_MSG_ERROR([opendht >= 2.4 not found (Debian: libopendht-dev): $OPENDHT_PKG_ERRORS])])
  PKG_CHECK_MODULES([GNUTLS], [gnutls >= 3.6], [],
    [AC_MSG_ERROR([gnutls not found (Debian: libgnutls28-dev): $GNUTLS_PKG_ERRORS])])
  PKG_CHECK_MODULES([FMT], [fmt >= 8], [],
    [AC_MSG_ERROR([fmt >= 8 not found (Debian: libfmt-dev): $FMT_PKG_ERRORS])])
  PKG_CHECK_MODULES([OPENSSL], [openssl >= 1.1.1], [],
    [AC_MSG_ERROR([openssl not found (Debian: libssl-dev): $OPENSSL_PKG_ERRORS])])

  dnl Header-only and .pc-less dependencies are checked with the project's compile definitions, the
  dnl way every translation unit will see them.
  dhtgate_save_CPPFLAGS=$CPPFLAGS
  CPPFLAGS="$CPPFLAGS $DHTGATE_DEFINES $FMT_CFLAGS"

  AC_CHECK_HEADER([http_parser.h], [],
    [AC_MSG_ERROR([http_parser.h not found (Debian: libhttp-parser-dev)])])
  AC_CHECK_LIB([http_parser], [http_parser_init], [HTTP_PARSER_LIBS=-lhttp_parser],
    [AC_MSG_ERROR([libhttp_parser not found (Debian: libhttp-parser-dev)])])
  AC_SUBST([HTTP_PARSER_LIBS])

  AC_CHECK_HEADER([asio.hpp], [],
    [AC_MSG_ERROR([standalone asio.hpp not found (Debian: libasio-dev)])])
  AC_CHECK_HEADER([msgpack.hpp], [],
    [AC_MSG_ERROR([msgpack.hpp not found (Debian: libmsgpack-cxx-dev)])])
  dnl restinio/all.hpp is heavy (a few seconds to compile) but compiling it here is the only honest check
  dnl that restinio, asio, fmt and http_parser fit together.
  AC_CHECK_HEADER([restinio/all.hpp], [],
    [AC_MSG_ERROR([restinio/all.hpp not found or not usable (Debian: librestinio-dev); see config.log])])

  CPPFLAGS=$dhtgate_save_CPPFLAGS
])

# DHTGATE_CHECK_TEST_DEPS
#   cppunit, for the test runner dhtproxytests (`make check`), and jsoncpp: the tests compare with
#   libopendht's jsoncpp-based reference encoder (the product never uses jsoncpp).
AC_DEFUN([DHTGATE_CHECK_TEST_DEPS], [
  PKG_CHECK_MODULES([CPPUNIT], [cppunit >= 1.12], [],
    [AC_MSG_ERROR([cppunit not found (Debian: libcppunit-dev), or configure with --disable-tests: $CPPUNIT_PKG_ERRORS])])
  PKG_CHECK_MODULES([JSONCPP], [jsoncpp], [],
    [AC_MSG_ERROR([jsoncpp not found (Debian: libjsoncpp-dev), or configure with --disable-tests: $JSONCPP_PKG_ERRORS])])
])
