// The expression grammar of Itanium mangled names, as it appears in template arguments (X...E),
// decltype types and array bounds: only parsed, never evaluated, so that what follows it is read
// from the right place.
#include "itanium_parser.h"

namespace tbdprof::collector::itanium {
namespace {

// Operators of expressions by their two-letter codes, with the number of operands.
struct OperatorCode {
    char code[3];
    int arity;
};
constexpr OperatorCode kOperators[] = {
    {"ps", 1}, {"ng", 1}, {"ad", 1}, {"de", 1}, {"co", 1}, {"nt", 1}, {"pp", 1}, {"mm", 1}, {"pl", 2},
    {"mi", 2}, {"ml", 2}, {"dv", 2}, {"rm", 2}, {"an", 2}, {"or", 2}, {"eo", 2}, {"aS", 2}, {"pL", 2},
    {"mI", 2}, {"mL", 2}, {"dV", 2}, {"rM", 2}, {"aN", 2}, {"oR", 2}, {"eO", 2}, {"ls", 2}, {"rs", 2},
    {"lS", 2}, {"rS", 2}, {"eq", 2}, {"ne", 2}, {"lt", 2}, {"gt", 2}, {"le", 2}, {"ge", 2}, {"ss", 2},
    {"aa", 2}, {"oo", 2}, {"cm", 2}, {"pm", 2}, {"ds", 2}, {"qu", 3},
};
// The other two-letter forms by the operands that follow the code, in order: t a type, e an
// expression, E expressions up to an E, n an unresolved name.
struct TwoLetterForm {
    char code[3];
    const char* operands;
};
constexpr TwoLetterForm kTwoLetterForms[] = {
    {"cl", "E"},  {"cc", "te"}, {"st", "t"},  {"sz", "e"}, {"sp", "e"},  {"sc", "te"}, {"at", "t"}, {"az", "e"},
    {"dc", "te"}, {"dt", "en"}, {"dl", "e"},  {"da", "e"}, {"rc", "te"}, {"ti", "t"},  {"te", "e"}, {"tw", "e"},
    {"tr", ""},   {"tl", "tE"}, {"pt", "en"}, {"il", "E"}, {"ix", "ee"}, {"nx", "e"},
};
// Operator names that may name a function but are not expression operators above.
constexpr const char* kOtherOperatorNames[] = {"nw", "na", "dl", "da", "pt", "cl", "ix", "aw", "sp"};

}  // namespace

int operator_arity(const char* p) {
    for (const OperatorCode& op : kOperators) {
        if (p[0] == op.code[0] && p[0] != '\0' && p[1] == op.code[1]) return op.arity;
    }
    return 0;
}

bool other_operator_name(const char* p) {
    for (const char* other : kOtherOperatorNames) {
        if (p[0] == other[0] && p[1] == other[1]) return true;
    }
    return false;
}

void Parser::unresolved_type() {
    if (*p_ == 'T') {
        template_param();
        candidate();
        if (*p_ == 'I') template_args();
    } else if (*p_ == 'D' && (at(1) == 't' || at(1) == 'T')) {
        p_ += 2;
        expression();
        expect('E');
        candidate();
    } else if (*p_ == 'S') {
        substitution();
        if (*p_ == 'I') template_args();
    } else {
        fail();
    }
}

void Parser::simple_id() {
    source_name();
    if (ok_ && *p_ == 'I') template_args();
}

void Parser::base_unresolved_name() {
    if (is_digit(*p_)) return simple_id();
    if (*p_ == 'o' && at(1) == 'n') {
        p_ += 2;
        operator_name();
        if (ok_ && *p_ == 'I') template_args();
        return;
    }
    if (*p_ == 'd' && at(1) == 'n') {
        p_ += 2;
        if (is_digit(*p_)) return simple_id();
        return unresolved_type();
    }
    fail();
}

// [gs] <base-unresolved-name> | sr ... (scoped names in expressions)
void Parser::unresolved_name() {
    if (*p_ == 'g' && at(1) == 's') p_ += 2;
    if (!(*p_ == 's' && at(1) == 'r')) return base_unresolved_name();
    p_ += 2;
    if (*p_ == 'N') {
        ++p_;
        unresolved_type();
        until_end([&] { simple_id(); });
    } else if (is_digit(*p_)) {
        until_end([&] { simple_id(); });
    } else {
        unresolved_type();
    }
    base_unresolved_name();
}

void Parser::operands(const char* kinds) {
    for (; *kinds != '\0'; ++kinds) {
        if (*kinds == 't')
            type();
        else if (*kinds == 'e')
            expression();
        else if (*kinds == 'E')
            until_end([&] { expression(); });
        else
            unresolved_name();
    }
}

// fp [<cv>] [<number>] _   |   fL <number> p [<cv>] [<number>] _
void Parser::function_param() {
    if (p_[1] == 'L') {
        p_ += 2;
        number();
        expect('p');
    } else {
        p_ += 2;
    }
    while (*p_ == 'r' || *p_ == 'V' || *p_ == 'K') ++p_;
    if (is_digit(*p_)) number();
    expect('_');
}

void Parser::expression() {
    Depth depth(*this);
    if (!ok_) return;
    const char c = *p_, d = at(1);
    if (c == 'L') return expr_primary();
    if (c == 'T') {
        template_param();
        return;
    }
    if (is_digit(c) || (c == 's' && d == 'r') || (c == 'g' && d == 's') || (c == 'o' && d == 'n') ||
        (c == 'd' && d == 'n')) {
        if (c == 'g' && d == 's' && (at(2) == 'n' || at(2) == 'd')) return fail();  // ::new, ::delete
        return unresolved_name();
    }
    if (c == 'f' && (d == 'p' || (d == 'L' && (is_digit(at(2)) || at(2) == 'p')))) return function_param();
    if (c == 'f' && (d == 'l' || d == 'r')) {  // unary folds
        p_ += 2;
        operator_name();
        expression();
        return;
    }
    if (c == 'f' && (d == 'L' || d == 'R')) {  // binary folds
        p_ += 2;
        operator_name();
        expression();
        expression();
        return;
    }
    if ((c == 'p' && d == 'p') || (c == 'm' && d == 'm')) {  // ++/--, prefix form marked by '_'
        p_ += 2;
        eat('_');
        expression();
        return;
    }
    if (const int arity = operator_arity(p_); arity > 0) {
        p_ += 2;
        for (int i = 0; i < arity && ok_; ++i) expression();
        return;
    }
    if (d == '\0') return fail();
    p_ += 2;  // the two-letter forms below; anything else fails
    for (const TwoLetterForm& form : kTwoLetterForms) {
        if (c == form.code[0] && d == form.code[1]) return operands(form.operands);
    }
    if (c == 'c' && d == 'v') {  // cv <type> (_ <expression>* E | <expression>)
        type();
        if (eat('_')) return until_end([&] { expression(); });
        return expression();
    }
    if (c == 's' && d == 'Z') {  // sZ <template-param> | sZ <function-param>
        if (*p_ == 'T') return static_cast<void>(template_param());
        if (*p_ == 'f') return function_param();
    }
    if (c == 's' && d == 'P') return until_end([&] { template_arg(); });
    if (c == 'u') {  // u <source-name> <template-arg>* E
        p_ -= 1;
        source_name();
        return until_end([&] { template_arg(); });
    }
    fail();
}
}  // namespace tbdprof::collector::itanium
