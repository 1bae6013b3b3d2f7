// dhtgate: fmt-style logger shared by every component.
//
// A Logger is a small value type: a level threshold plus a sink. It is never null; the
// default-constructed Logger discards everything. Components prefix their messages with
// their name and an id, e.g. "[server] [conn:12] ...".
//
// Thread contract: a Logger may be copied freely; the sink is called from whichever thread
// logs, so a sink shared between threads must be thread-safe (the stderr sink is).
#pragma once

#include <fmt/format.h>

#include <functional>
#include <memory>
#include <string_view>

namespace dhtgate {

enum class LogLevel { trace = 0, debug, info, warn, error, off };

/// Parses "trace", "debug", "info", "warn", "error", "off". Returns false on anything else.
bool parseLogLevel(std::string_view text, LogLevel& out);
std::string_view toString(LogLevel level);

class Logger {
public:
    using Sink = std::function<void(LogLevel, std::string_view)>;

    /// Discards everything.
    Logger() = default;
    Logger(LogLevel threshold, Sink sink) : threshold_(threshold), sink_(std::make_shared<Sink>(std::move(sink))) {}

    /// A logger writing timestamped lines to stderr.
    static Logger toStderr(LogLevel threshold);

    bool enabled(LogLevel level) const { return sink_ && level >= threshold_ && threshold_ != LogLevel::off; }
    LogLevel threshold() const { return threshold_; }

    template <typename... Args>
    void log(LogLevel level, fmt::format_string<Args...> format, Args&&... args) const {
        if (enabled(level))
            (*sink_)(level, fmt::format(format, std::forward<Args>(args)...));
    }
    template <typename... Args>
    void trace(fmt::format_string<Args...> f, Args&&... a) const { log(LogLevel::trace, f, std::forward<Args>(a)...); }
    template <typename... Args>
    void debug(fmt::format_string<Args...> f, Args&&... a) const { log(LogLevel::debug, f, std::forward<Args>(a)...); }
    template <typename... Args>
    void info(fmt::format_string<Args...> f, Args&&... a) const { log(LogLevel::info, f, std::forward<Args>(a)...); }
    template <typename... Args>
    void warn(fmt::format_string<Args...> f, Args&&... a) const { log(LogLevel::warn, f, std::forward<Args>(a)...); }
    template <typename... Args>
    void error(fmt::format_string<Args...> f, Args&&... a) const { log(LogLevel::error, f, std::forward<Args>(a)...); }

private:
    LogLevel threshold_ {LogLevel::off};
    std::shared_ptr<Sink> sink_;
};

} // namespace dhtgate
