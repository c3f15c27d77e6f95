#include "tbdprof/collector/mangled_params.h"

#include <cctype>
#include <cstring>

namespace tbdprof::collector {

namespace {

// Each parser returns the position after what it parsed, or null when it cannot continue.
const char* parse_type(const char* p, int depth);

const char* parse_number(const char* p, long* value) {
    if (!std::isdigit(static_cast<unsigned char>(*p))) return nullptr;
    long v = 0;
    while (std::isdigit(static_cast<unsigned char>(*p))) v = v * 10 + (*p++ - '0');
    *value = v;
    return p;
}

const char* parse_source_name(const char* p) {
    long length = 0;
    p = parse_number(p, &length);
    if (p == nullptr || length <= 0 || static_cast<long>(std::strlen(p)) < length) return nullptr;
    return p + length;
}

// S_, S<base36>_, St, Sa, Sb, Ss, Si, So, Sd.
const char* parse_substitution(const char* p) {
    if (*p != 'S') return nullptr;
    ++p;
    if (*p != '\0' && std::strchr("tabsiod", *p) != nullptr) return p + 1;
    while (std::isdigit(static_cast<unsigned char>(*p)) || std::isupper(static_cast<unsigned char>(*p))) ++p;
    return *p == '_' ? p + 1 : nullptr;
}

const char* parse_template_args(const char* p, int depth) {
    if (*p != 'I') return p;
    ++p;
    while (*p != 'E') {
        if (*p == '\0') return nullptr;
        if (*p == 'L') {  // literal: L <type> <value> E
            const char* end = std::strchr(p, 'E');
            if (end == nullptr) return nullptr;
            p = end + 1;
            continue;
        }
        p = parse_type(p, depth + 1);
        if (p == nullptr) return nullptr;
    }
    return p + 1;
}

// N [qualifiers] <prefix>* E, where prefixes are source names, substitutions, template args.
const char* parse_nested_name(const char* p, int depth) {
    if (*p != 'N') return nullptr;
    ++p;
    while (*p == 'K' || *p == 'V' || *p == 'r' || *p == 'R' || *p == 'O') ++p;
    while (*p != 'E') {
        if (*p == '\0') return nullptr;
        if (*p == 'S') p = parse_substitution(p);
        else if (*p == 'I') p = parse_template_args(p, depth);
        else if (*p == 'C' || *p == 'D') p = (p[1] != '\0') ? p + 2 : nullptr;  // constructors, destructors
        else p = parse_source_name(p);
        if (p == nullptr) return nullptr;
    }
    return p + 1;
}

const char* parse_type(const char* p, int depth) {
    if (depth > 32 || p == nullptr) return nullptr;
    switch (*p) {
    case 'v': case 'b': case 'c': case 'a': case 'h': case 's': case 't': case 'i': case 'j':
    case 'l': case 'm': case 'x': case 'y': case 'n': case 'o': case 'f': case 'd': case 'e':
    case 'g': case 'w': case 'z':
        return p + 1;
    case 'D':  // Dh (half), Df, Dd, De, Di, Ds, Du, Dn, Da, Dc
        return p[1] != '\0' && std::strchr("hfdeisunac", p[1]) != nullptr ? p + 2 : nullptr;
    case 'P': case 'R': case 'O': case 'K': case 'V': case 'r':
        return parse_type(p + 1, depth + 1);
    case 'N':
        return parse_template_args(parse_nested_name(p, depth), depth);
    case 'S': {
        const char* q = parse_substitution(p);
        return q == nullptr ? nullptr : parse_template_args(q, depth);
    }
    case 'T': {  // template parameter T_ or T<n>_
        const char* q = p + 1;
        while (std::isdigit(static_cast<unsigned char>(*q))) ++q;
        return *q == '_' ? q + 1 : nullptr;
    }
    default:
        if (std::isdigit(static_cast<unsigned char>(*p))) return parse_template_args(parse_source_name(p), depth);
        return nullptr;  // arrays, function types, expressions...: give up
    }
}

}  // namespace

uint64_t const_pointer_parameters(const char* name) {
    if (name == nullptr || std::strncmp(name, "_Z", 2) != 0) return 0;
    const char* p = name + 2;
    bool is_template = false;
    if (*p == 'N') {
        p = parse_nested_name(p, 0);
        if (p == nullptr) return 0;
        // A nested name whose last component had template arguments: "...IfEE".
        is_template = p - name >= 2 && p[-2] == 'E';
    } else {
        p = parse_source_name(p);
        if (p == nullptr) return 0;
        if (*p == 'I') {
            p = parse_template_args(p, 0);
            is_template = true;
        }
    }
    if (p == nullptr) return 0;
    if (is_template) p = parse_type(p, 0);  // a function template's name encodes its return type
    uint64_t mask = 0;
    for (int index = 0; p != nullptr && *p != '\0' && *p != '.'; ++index) {
        if (p[0] == 'P' && p[1] == 'K' && index < 64) mask |= uint64_t{1} << index;
        p = parse_type(p, 0);
    }
    return p == nullptr ? 0 : mask;
}

}  // namespace tbdprof::collector
