#include "dhtgate/logger.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace dhtgate {

bool parseLogLevel(std::string_view text, LogLevel& out) {
    static constexpr std::pair<std::string_view, LogLevel> names[] = {
        {"trace", LogLevel::trace}, {"debug", LogLevel::debug}, {"info", LogLevel::info},
        {"warn", LogLevel::warn},   {"error", LogLevel::error}, {"off", LogLevel::off}};
    for (const auto& [name, level] : names)
        if (name == text) {
            out = level;
            return true;
        }
    return false;
}

std::string_view toString(LogLevel level) {
    switch (level) {
    case LogLevel::trace: return "trace";
    case LogLevel::debug: return "debug";
    case LogLevel::info: return "info";
    case LogLevel::warn: return "warn";
    case LogLevel::error: return "error";
    case LogLevel::off: return "off";
    }
    return "?";
}

Logger Logger::toStderr(LogLevel threshold) {
    return Logger(threshold, [](LogLevel level, std::string_view message) {
        using namespace std::chrono;
        const auto now = system_clock::now();
        const auto t = system_clock::to_time_t(now);
        const auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
        std::tm tm {};
        gmtime_r(&t, &tm);
        // One fwrite per line keeps lines from different threads whole.
        const auto line = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z {:5} {}\n", tm.tm_year + 1900,
                                      tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms,
                                      toString(level), message);
        std::fwrite(line.data(), 1, line.size(), stderr);
    });
}

} // namespace dhtgate
