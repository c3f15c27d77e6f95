// A recursive-descent parse of the Itanium C++ ABI name grammar ("Mangling" chapter of the ABI),
// keeping only what the parameter list needs: for each type, whether it is a pointer and whether it
// is const-qualified. Substitution candidates are recorded in the order the ABI defines, so `Sn_`
// and `Tn_` resolve to the right earlier type. Every production either consumes what it recognises
// or fails the whole parse; the caller then gets `understood == false`.
#include "itanium_parser.h"

#include <cstring>

namespace tbdprof::collector::itanium {

bool Parser::number(uint64_t* value) {
    eat('n');  // negative
    if (!is_digit(*p_)) {
        fail();
        return false;
    }
    uint64_t v = 0;
    while (is_digit(*p_)) {
        v = v * 10 + static_cast<uint64_t>(*p_++ - '0');
        if (v > (uint64_t{1} << 40)) {
            fail();
            return false;
        }
    }
    if (value) *value = v;
    return true;
}

void Parser::source_name() {
    uint64_t length = 0;
    if (!number(&length) || length == 0) return fail();
    for (uint64_t i = 0; i < length; ++i) {
        if (p_[i] == '\0') return fail();
    }
    p_ += length;
}

void Parser::discriminator() {
    if (*p_ != '_') return;
    if (is_digit(at(1))) {
        p_ += 2;
    } else if (at(1) == '_') {
        p_ += 2;
        if (number()) expect('_');
    }
}

void Parser::abi_tags() {
    while (ok_ && *p_ == 'B') {
        ++p_;
        source_name();
    }
}

// <unqualified-name>: source names, operators, constructors and destructors, unnamed types.
NameInfo Parser::unqualified_name() {
    Depth depth(*this);
    NameInfo info;
    const char c = *p_;
    if (is_digit(c)) {
        source_name();
    } else if (c == 'L' && is_digit(at(1))) {  // internal linkage
        ++p_;
        source_name();
        discriminator();
    } else if (c == 'U' && at(1) == 't') {  // Ut [<number>] _
        p_ += 2;
        if (is_digit(*p_)) number();
        expect('_');
    } else if (c == 'U' && at(1) == 'l') {  // Ul <lambda-sig> E [<number>] _
        p_ += 2;
        until_end([&] { type(); });
        if (is_digit(*p_)) number();
        expect('_');
    } else if (c == 'C' && (at(1) >= '1' && at(1) <= '5')) {
        p_ += 2;
        info.no_return_type = true;
    } else if (c == 'C' && at(1) == 'I' && (at(2) == '1' || at(2) == '2')) {  // inheriting constructor
        p_ += 3;
        type();
        info.no_return_type = true;
    } else if (c == 'D' && (at(1) == '0' || at(1) == '1' || at(1) == '2' || at(1) == '4' || at(1) == '5')) {
        p_ += 2;
        info.no_return_type = true;
    } else if (c == 'D' && at(1) == 'C') {  // structured binding
        p_ += 2;
        while (ok_ && *p_ != 'E') source_name();
        expect('E');
    } else if (c >= 'a' && c <= 'z') {
        info = operator_name();
    } else {
        fail();
    }
    abi_tags();
    return info;
}

NameInfo Parser::operator_name() {
    NameInfo info;
    if (*p_ == 'c' && at(1) == 'v') {  // conversion operator
        p_ += 2;
        type();
        info.no_return_type = true;
        return info;
    }
    if (*p_ == 'l' && at(1) == 'i') {  // literal operator
        p_ += 2;
        source_name();
        return info;
    }
    if (*p_ == 'v' && is_digit(at(1))) {  // vendor operator
        p_ += 2;
        source_name();
        return info;
    }
    if (at(1) == '\0') return fail(), info;
    if (operator_arity(p_) > 0 || other_operator_name(p_)) {
        p_ += 2;
        return info;
    }
    fail();
    return info;
}

// <substitution> other than St: S_, S<seq-id>_, Sa, Sb, Ss, Si, So, Sd.
TypeInfo Parser::substitution() {
    ++p_;  // S
    const char c = *p_;
    if (c == 'a' || c == 'b' || c == 's' || c == 'i' || c == 'o' || c == 'd') {
        ++p_;
        return {};
    }
    size_t index = 0;
    if (c != '_') {
        size_t seq = 0;
        bool any = false;
        while (is_digit(*p_) || (*p_ >= 'A' && *p_ <= 'Z')) {
            seq = seq * 36 + static_cast<size_t>(is_digit(*p_) ? *p_ - '0' : *p_ - 'A' + 10);
            ++p_;
            any = true;
            if (seq > kMaxSubstitutions) return fail(), TypeInfo{};
        }
        if (!any) return fail(), TypeInfo{};
        index = seq + 1;
    }
    if (!expect('_')) return {};
    if (index >= sub_count_) return fail(), TypeInfo{};
    return subs_[index];
}

// T_ or T<n>_: the template argument it stands for, when known.
TypeInfo Parser::template_param() {
    ++p_;  // T
    size_t index = 0;
    if (*p_ != '_') {
        uint64_t n = 0;
        if (!is_digit(*p_) || !number(&n)) return fail(), TypeInfo{};
        index = static_cast<size_t>(n) + 1;
    }
    if (!expect('_')) return {};
    if (index >= targ_count_) return {};
    const TypeInfo& arg = targs_[index];
    if (!arg.is_pack) return arg;
    if (expanding_ == static_cast<int>(index)) return packs_[element_];
    pack_seen_ = static_cast<int>(index);
    return {};
}

// I <template-arg>+ E. The arguments of the name being encoded (not those nested inside an
// argument) become what T_ refers to.
void Parser::template_args() {
    Depth depth(*this);
    ++p_;  // I
    TypeInfo args[kMaxTemplateArgs];
    size_t count = 0;
    const bool outermost = args_depth_ == 0;
    ++args_depth_;
    ++enclosed_;
    while (ok_ && *p_ != 'E') {
        if (*p_ == '\0') {
            fail();
            break;
        }
        const TypeInfo t = outermost && *p_ == 'J' ? pack_arg() : template_arg();
        if (count < kMaxTemplateArgs)
            args[count++] = t;
        else if (outermost)
            fail();
    }
    --args_depth_;
    --enclosed_;
    expect('E');
    if (ok_ && outermost) {
        for (size_t i = 0; i < count; ++i) targs_[i] = args[i];
        targ_count_ = count;
    }
}

// J <template-arg>* E among the arguments T_ refers to: its elements are kept for expansions.
TypeInfo Parser::pack_arg() {
    ++p_;  // J
    TypeInfo pack;
    pack.is_pack = true;
    pack.pack_begin = static_cast<uint16_t>(pack_count_);
    while (ok_ && *p_ != 'E') {
        if (*p_ == '\0') return fail(), pack;
        const TypeInfo element = template_arg();
        if (pack_count_ >= kMaxPackElements) return fail(), pack;
        packs_[pack_count_++] = element;
        ++pack.pack_count;
    }
    expect('E');
    return pack;
}

TypeInfo Parser::template_arg() {
    Depth depth(*this);
    switch (*p_) {
        case 'X':
            ++p_;
            expression();
            expect('E');
            return {};
        case 'L':
            expr_primary();
            return {};
        case 'J':  // argument pack
            ++p_;
            until_end([&] { template_arg(); });
            return {};
        default:
            return type();
    }
}

// L <type> <value> E, L _Z <encoding> E, LDnE.
void Parser::expr_primary() {
    Depth depth(*this);
    ++p_;  // L
    if (*p_ == '_' && at(1) == 'Z') {
        p_ += 2;
        nested_encoding();
        expect('E');
        return;
    }
    type();
    until_end([&] { ++p_; });  // digits, 'n', hexadecimal float digits
}

// The encoding inside a local name or an L_Z literal: its own template arguments are what its
// own T_ refer to, so the outer ones are kept aside meanwhile.
void Parser::nested_encoding() {
    TypeInfo saved[kMaxTemplateArgs];
    const size_t saved_count = targ_count_;
    for (size_t i = 0; i < saved_count; ++i) saved[i] = targs_[i];
    const int saved_args_depth = args_depth_;
    args_depth_ = 0;
    ++enclosed_;
    const NameInfo info = name();
    if (ok_ && *p_ != 'E' && !at_end()) {  // a function: its type follows
        if (info.is_template && !info.no_return_type) type();
        while (ok_ && *p_ != 'E') {
            if (at_end()) return fail();
            type();
        }
    }
    args_depth_ = saved_args_depth;
    --enclosed_;
    for (size_t i = 0; i < saved_count; ++i) targs_[i] = saved[i];
    targ_count_ = saved_count;
}

// Z <encoding> E <entity name> [<discriminator>], Z <encoding> E s [<discriminator>].
NameInfo Parser::local_name() {
    Depth depth(*this);
    ++p_;  // Z
    nested_encoding();
    expect('E');
    NameInfo info;
    if (*p_ == 's') {
        ++p_;
    } else if (*p_ == 'd') {  // default argument scope: d [<number>] _ <name>
        ++p_;
        if (is_digit(*p_)) number();
        expect('_');
        info = name();
    } else {
        info = name();
    }
    discriminator();
    return info;
}

// N [<CV-qualifiers>] [<ref-qualifier>] <prefix>... E. Every prefix is a substitution candidate;
// the whole name is not (a type's caller adds it).
NameInfo Parser::nested_name(bool as_type) {
    Depth depth(*this);
    ++p_;  // N
    const char* qualifiers = p_;
    while (*p_ == 'r' || *p_ == 'V' || *p_ == 'K') ++p_;
    if (*p_ == 'R' || *p_ == 'O') ++p_;
    if (as_type && p_ != qualifiers) return fail(), NameInfo{};  // qualifiers belong to member functions
    NameInfo info;
    bool have_prefix = false, prefix_in_table = false;
    while (ok_ && *p_ != 'E') {
        if (*p_ == '\0') return fail(), info;
        if (*p_ == 'I') {
            if (!have_prefix) return fail(), info;
            if (!prefix_in_table) candidate();  // <template-prefix>
            template_args();
            prefix_in_table = false;
            info.is_template = true;
            continue;
        }
        if (have_prefix && !prefix_in_table) candidate();  // <prefix>
        info = NameInfo{};
        if (*p_ == 'S' && at(1) == 't') {
            p_ += 2;
            prefix_in_table = true;  // "std::" alone is no candidate
        } else if (*p_ == 'S') {
            substitution();
            prefix_in_table = true;
        } else if (*p_ == 'T') {
            template_param();
            prefix_in_table = false;
        } else if (*p_ == 'D' && (at(1) == 't' || at(1) == 'T')) {
            p_ += 2;
            expression();
            expect('E');
            prefix_in_table = false;
        } else {
            info = unqualified_name();
            prefix_in_table = false;
        }
        have_prefix = true;
    }
    expect('E');
    return info;
}

// <name>: nested, local, unscoped (possibly std::), unscoped template (a candidate before its
// arguments).
NameInfo Parser::name() {
    Depth depth(*this);
    if (!ok_) return {};
    NameInfo info;
    switch (*p_) {
        case 'N':
            return nested_name();
        case 'Z':
            return local_name();
        case 'S':
            if (at(1) == 't') {
                p_ += 2;
                info = unqualified_name();
            } else {
                substitution();
                if (*p_ != 'I') return fail(), info;
                template_args();
                info.is_template = true;
                return info;
            }
            break;
        default:
            info = unqualified_name();
            break;
    }
    if (ok_ && *p_ == 'I') {
        candidate();  // <unscoped-template-name>
        template_args();
        info.is_template = true;
    }
    return info;
}

TypeInfo Parser::type() {
    Depth depth(*this);
    if (!ok_) return {};
    const char c = *p_;
    if (c != '\0' && std::strchr("vwbcahstijlmxynofdegz", c) != nullptr) {  // builtin types
        ++p_;
        return {};
    }
    switch (c) {
        case 'u': {  // vendor extended type
            ++p_;
            source_name();
            if (*p_ == 'I') template_args();
            candidate();
            return {};
        }
        case 'r':
        case 'V':
        case 'K': {
            bool is_const = false;
            while (*p_ == 'r' || *p_ == 'V' || *p_ == 'K') is_const |= *p_++ == 'K';
            TypeInfo t = type();
            t.is_const |= is_const;
            candidate(t);
            return t;
        }
        case 'P': {
            ++p_;
            const TypeInfo pointee = type();
            TypeInfo t;
            t.pointer = !pointee.is_function;
            t.pointee_const = t.pointer && pointee.is_const;
            candidate(t);
            return t;
        }
        case 'R':
        case 'O':
        case 'C':
        case 'G':
            ++p_;
            type();
            candidate();
            return {};
        case 'F': {
            function_type();
            TypeInfo t;
            t.is_function = true;
            candidate(t);
            return t;
        }
        case 'A': {
            ++p_;
            if (is_digit(*p_))
                number();
            else if (*p_ != '_')
                expression();
            expect('_');
            TypeInfo t;
            t.is_const = type().is_const;  // a pointer to an array of const elements is read-only
            candidate(t);
            return t;
        }
        case 'M':
            ++p_;
            type();
            type();
            candidate();
            return {};
        case 'T': {
            const TypeInfo t = template_param();
            candidate(t);
            if (*p_ == 'I') {  // template template parameter with arguments
                template_args();
                candidate();
                return {};
            }
            return t;
        }
        case 'S': {
            if (at(1) == 't') {
                p_ += 2;
                unqualified_name();
                candidate();
                if (*p_ == 'I') {
                    template_args();
                    candidate();
                }
                return {};
            }
            const TypeInfo t = substitution();
            if (*p_ == 'I') {
                template_args();
                candidate();
                return {};
            }
            return t;
        }
        case 'N':
            nested_name(true);
            candidate();
            return {};
        case 'Z':
            local_name();
            candidate();
            return {};
        case 'D':
            return d_type();
        case 'U':
            if (at(1) == 'l' || at(1) == 't') {
                name();
                candidate();
                return {};
            }
            // U <source-name> [<template-args>]: a vendor qualifier (address spaces and the like);
            // demanglers disagree on how it combines with CV-qualifiers, so no hint is given.
            fail();
            return {};
        default:
            if (is_digit(c) || c == 'L') {
                name();
                candidate();
                return {};
            }
            fail();
            return {};
    }
}

TypeInfo Parser::d_type() {
    const char c = at(1);
    // Dd De Df (decimal floats), Dh (half), Di Ds Du (char32_t, char16_t, char8_t), Da Dc (auto), Dn (nullptr_t)
    if (c != '\0' && std::strchr("defhisuacn", c) != nullptr) {
        p_ += 2;
        return {};
    }
    switch (c) {
        case 'F':  // DF <number> _ (std::floatN_t) or DF16b (std::bfloat16_t)
            p_ += 2;
            number();
            if (!eat('_') && !eat('b')) fail();
            return {};
        case 'B':
        case 'U':  // _BitInt(N)
            p_ += 2;
            if (is_digit(*p_))
                number();
            else
                expression();
            expect('_');
            return {};
        case 'p': {  // pack expansion
            // Directly in a parameter's type it would stand for several parameters: only
            // expand_pack() may take those. Inside template arguments or a function type it is one
            // type among others.
            if (enclosed_ == 0) return fail(), TypeInfo{};
            p_ += 2;
            type();
            candidate();
            return {};
        }
        case 't':
        case 'T':  // decltype
            p_ += 2;
            expression();
            expect('E');
            candidate();
            return {};
        case 'v':  // vector type
            p_ += 2;
            if (*p_ == '_') {
                ++p_;
                expression();
            } else {
                number();
            }
            expect('_');
            type();
            candidate();
            return {};
        case 'o':  // noexcept function type: Do F...E
            p_ += 2;
            return type();
        default:
            fail();
            return {};
    }
}

// F [Y] <return type> <parameter types> [<ref-qualifier>] E
void Parser::function_type() {
    ++p_;  // F
    ++enclosed_;
    struct Leave {
        int& count;
        ~Leave() { --count; }
    } leave{enclosed_};
    eat('Y');
    type();
    while (ok_ && *p_ != 'E') {
        if (*p_ == '\0') return fail();
        if ((*p_ == 'R' || *p_ == 'O') && at(1) == 'E') {
            ++p_;
            break;
        }
        type();
    }
    expect('E');
}
}  // namespace tbdprof::collector::itanium
