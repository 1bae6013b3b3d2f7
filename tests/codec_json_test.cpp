#include "codec/json.h"
#include "codec/base64.h"

#include <cppunit/extensions/HelperMacros.h>

#include <cstdint>
#include <string>
#include <vector>

using namespace dhtgate;

namespace {

bool ok(std::string_view text)
{
    json::Value v;
    json::Error e;
    return json::parse(text, v, e);
}

json::Value parsed(std::string_view text)
{
    json::Value v;
    json::Error e;
    CPPUNIT_ASSERT_MESSAGE(std::string(text) + ": " + e.reason, json::parse(text, v, e));
    return v;
}

std::string quoted(std::string_view s)
{
    std::string out;
    json::appendJsonString(out, s);
    return out;
}

std::string b64(std::string_view s)
{
    std::string out;
    base64::encode(out, s);
    return out;
}

bool unb64(std::string_view s, std::string& out)
{
    std::vector<std::uint8_t> bytes {1, 2, 3};
    if (!base64::decode(s, bytes))
        return false;
    out.assign(bytes.begin(), bytes.end());
    return true;
}

} // namespace

class CodecJsonTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(CodecJsonTest);
    CPPUNIT_TEST(testAccepts);
    CPPUNIT_TEST(testRejects);
    CPPUNIT_TEST(testDepth);
    CPPUNIT_TEST(testStrings);
    CPPUNIT_TEST(testNumbers);
    CPPUNIT_TEST(testObjects);
    CPPUNIT_TEST(testErrorPosition);
    CPPUNIT_TEST(testWriter);
    CPPUNIT_TEST(testBase64Vectors);
    CPPUNIT_TEST(testBase64Rejects);
    CPPUNIT_TEST(testBase64RoundTrip);
    CPPUNIT_TEST_SUITE_END();

public:
    void testAccepts()
    {
        for (const char* t : {"{}", "[]", "0", "-0", "1.5e10", "\"\"", "true", "false", "null", " {} ", "{}\n",
                              "\t[ 1 , 2 ]\r\n", "{\"a\":[{},[],null]}", "{\"client_id\":\"x\",\"key\":\"t\"} ",
                              "-1.25E-3", "1e+2"})
            CPPUNIT_ASSERT_MESSAGE(t, ok(t));
    }

    void testRejects()
    {
        for (const char* t : {"", " ", "{", "{\"data\":", "[1,2", "{} x", "{}{}", "{}//c", "/*c*/{}", "{\"a\":1,}",
                              "[1,]", "{'a':1}", "{a:1}", "01", "1.", ".5", "+1", "1e", "-", "tru", "nul", "NaN",
                              "Infinity", "\"abc", "\"a\tb\"", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"",
                              "\"\\ud800\\u0041\"", "\"\xff\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "\"\xe2\x82\"",
                              "{\"a\" 1}", "[1 2]", "\xef\xbb\xbf{}"})
            CPPUNIT_ASSERT_MESSAGE(t, !ok(t));
        // An embedded NUL after the value is trailing garbage.
        CPPUNIT_ASSERT(!ok(std::string_view("{}\0", 3)));
    }

    void testDepth()
    {
        std::string deep(json::kMaxDepth, '[');
        deep.append(json::kMaxDepth, ']');
        CPPUNIT_ASSERT(ok(deep));
        std::string tooDeep(json::kMaxDepth + 1, '[');
        tooDeep.append(json::kMaxDepth + 1, ']');
        CPPUNIT_ASSERT(!ok(tooDeep));
        // Very deep input must fail cleanly, not overflow the stack.
        CPPUNIT_ASSERT(!ok(std::string(100000, '[')));
        CPPUNIT_ASSERT(!ok(std::string(100000, '{')));
    }

    void testStrings()
    {
        CPPUNIT_ASSERT_EQUAL(std::string("a\"b\\c/\b\f\n\r\t"), parsed(R"("a\"b\\c\/\b\f\n\r\t")").asString());
        CPPUNIT_ASSERT_EQUAL(std::string("\xc3\xa9\xe2\x82\xac"), parsed(R"("\u00e9\u20AC")").asString());
        CPPUNIT_ASSERT_EQUAL(std::string("\xf0\x9f\x98\x80"), parsed(R"("\ud83d\ude00")").asString());
        CPPUNIT_ASSERT_EQUAL(std::string("\xf0\x9f\x98\x80"), parsed("\"\xf0\x9f\x98\x80\"").asString());
        CPPUNIT_ASSERT_EQUAL(std::string("PEM\n", 4) + std::string(1, '\0'), parsed(R"("PEM\n\u0000")").asString());
    }

    void testNumbers()
    {
        std::uint64_t u = 0;
        std::int64_t i = 0;
        auto big = parsed("18446744073709551615");
        CPPUNIT_ASSERT(big.getUint64(u));
        CPPUNIT_ASSERT_EQUAL(UINT64_MAX, u);
        CPPUNIT_ASSERT(!big.getInt64(i));
        auto over = parsed("18446744073709551616");
        CPPUNIT_ASSERT(over.isNumber() && over.isInteger());
        CPPUNIT_ASSERT(!over.getUint64(u));
        CPPUNIT_ASSERT(over.asDouble() > 1.8e19);
        auto min = parsed("-9223372036854775808");
        CPPUNIT_ASSERT(min.getInt64(i));
        CPPUNIT_ASSERT_EQUAL(INT64_MIN, i);
        CPPUNIT_ASSERT(!min.getUint64(u));
        CPPUNIT_ASSERT(!parsed("-9223372036854775809").getInt64(i));
        auto neg = parsed("-1");
        CPPUNIT_ASSERT(neg.getInt64(i) && i == -1);
        CPPUNIT_ASSERT(!neg.getUint64(u));
        CPPUNIT_ASSERT(parsed("-0").getUint64(u) && u == 0);
        auto frac = parsed("42.0");
        CPPUNIT_ASSERT(!frac.isInteger());
        CPPUNIT_ASSERT(!frac.getUint64(u));
        CPPUNIT_ASSERT_EQUAL(42.0, frac.asDouble());
        CPPUNIT_ASSERT(!parsed("1e2").getUint64(u));
        CPPUNIT_ASSERT_EQUAL(100.0, parsed("1e2").asDouble());
        CPPUNIT_ASSERT(parsed("1e999").asDouble() > 1e308); // saturated, not an error
    }

    void testObjects()
    {
        auto v = parsed(R"({"a":1,"b":{"c":[true,null,"x"]},"a":2})");
        CPPUNIT_ASSERT(v.isObject());
        CPPUNIT_ASSERT_EQUAL(std::size_t(3), v.members().size());
        std::uint64_t u = 0;
        CPPUNIT_ASSERT(v.find("a")->getUint64(u));
        CPPUNIT_ASSERT_EQUAL(std::uint64_t(2), u); // last duplicate wins
        const auto& arr = v.find("b")->find("c")->items();
        CPPUNIT_ASSERT_EQUAL(std::size_t(3), arr.size());
        CPPUNIT_ASSERT(arr[0].isBool() && arr[0].asBool());
        CPPUNIT_ASSERT(arr[1].isNull());
        CPPUNIT_ASSERT_EQUAL(std::string("x"), arr[2].asString());
        CPPUNIT_ASSERT(v.find("zz") == nullptr);
        CPPUNIT_ASSERT(parsed("[1]").find("a") == nullptr);
    }

    void testErrorPosition()
    {
        json::Value v;
        json::Error e;
        CPPUNIT_ASSERT(!json::parse("{\"a\":1} xyz", v, e));
        CPPUNIT_ASSERT_EQUAL(std::size_t(8), e.offset);
        CPPUNIT_ASSERT(!e.reason.empty());
        CPPUNIT_ASSERT(!json::parse("[1,?]", v, e));
        CPPUNIT_ASSERT_EQUAL(std::size_t(3), e.offset);
    }

    void testWriter()
    {
        CPPUNIT_ASSERT_EQUAL(std::string(R"("plain text/plain")"), quoted("plain text/plain"));
        CPPUNIT_ASSERT_EQUAL(std::string(R"("q\"b\\")"), quoted("q\"b\\"));
        CPPUNIT_ASSERT_EQUAL(std::string(R"("\b\f\n\r\t\u0001\u001f\u0000")"),
                             quoted(std::string_view("\b\f\n\r\t\x01\x1f\0", 8)));
        CPPUNIT_ASSERT_EQUAL(std::string("\"\x7f\""), quoted("\x7f"));
        CPPUNIT_ASSERT_EQUAL(std::string(R"("\u00e9\u20ac\ud83d\ude00")"), quoted("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));
        CPPUNIT_ASSERT_EQUAL(std::string(R"("a\ufffdb\ufffd")"), quoted("a\xff" "b\xc3"));
        // Whatever the bytes, the output parses back.
        std::string all;
        for (int c = 0; c < 256; ++c)
            all.push_back(static_cast<char>(c));
        CPPUNIT_ASSERT(parsed(quoted(all)).isString());
        const std::string text = "x\"\\\n\x01 \xc3\xa9 \xf0\x9f\x98\x80";
        CPPUNIT_ASSERT_EQUAL(text, parsed(quoted(text)).asString());

        std::string n = "x";
        json::appendUint(n, 0);
        json::appendUint(n, UINT64_MAX);
        json::appendInt(n, INT64_MIN);
        CPPUNIT_ASSERT_EQUAL(std::string("x018446744073709551615-9223372036854775808"), n);
    }

    void testBase64Vectors()
    {
        // RFC 4648 §10.
        const char* vectors[][2] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},        {"foo", "Zm9v"},
                                    {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
        for (auto& v : vectors) {
            CPPUNIT_ASSERT_EQUAL(std::string(v[1]), b64(v[0]));
            std::string back;
            CPPUNIT_ASSERT(unb64(v[1], back));
            CPPUNIT_ASSERT_EQUAL(std::string(v[0]), back);
        }
        CPPUNIT_ASSERT_EQUAL(std::string("aGVsbG8gd29ybGQ="), b64("hello world"));
        CPPUNIT_ASSERT_EQUAL(std::string("+/8="), b64("\xfb\xff"));
        std::string out = "prefix:";
        base64::encode(out, "fo");
        CPPUNIT_ASSERT_EQUAL(std::string("prefix:Zm8="), out);
    }

    void testBase64Rejects()
    {
        std::string out;
        for (const char* t : {"eA", "Zg=", "Zg", "Z", "!!!not base64###", "Zm9v\n", " Zm8=", "Zm8 ", "Zm=8", "=Zm8",
                              "Zg==Zg==", "Zh==", "Zm9=", "====", "A===", "Zm-_", "Zm9v===="})
            CPPUNIT_ASSERT_MESSAGE(t, !unb64(t, out));
        CPPUNIT_ASSERT(unb64("", out) && out.empty());
    }

    void testBase64RoundTrip()
    {
        std::string bytes;
        for (int n = 0; n < 300; ++n) {
            std::string back;
            CPPUNIT_ASSERT(unb64(b64(bytes), back));
            CPPUNIT_ASSERT(back == bytes);
            CPPUNIT_ASSERT_EQUAL(base64::encodedSize(bytes.size()), b64(bytes).size());
            bytes.push_back(static_cast<char>(n * 37 + 11));
        }
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(CodecJsonTest);
