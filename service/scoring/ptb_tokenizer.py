"""The Stanford PTB tokenizer of Stanford CoreNLP 3.4.1 (the jar pycocoevalcap 1.2 ships), ported rule for rule.

pycocoevalcap runs ``java edu.stanford.nlp.process.PTBTokenizer -preserveLines -lowerCase`` on its captions, one per
line, then drops the tokens of :data:`PTB_PUNCTUATION`. The jar's lexer is a JFlex 1.4.3 scanner
(``PTBLexer.flex`` of CoreNLP 3.4.1, state ``YyTraditionalTreebank3``, options ``tokenizeNLs``): at each position
every rule is matched; the longest match wins, counting a rule's trailing context ``r1/r2`` in its length, and the
earlier rule wins a tie; ``%caseless`` makes literal characters match either case while character classes keep
theirs. :data:`_RULES` lists the rules in the lexer's order, each matched leftmost-longest (``regex``'s POSIX mode)
at the current position; text is scanned as Java's UTF-16 code units (a character outside the Basic Multilingual
Plane is two surrogates, which no rule but the untokenisable catch-all takes, so it is dropped, as by the jar).

``-lowerCase`` lower-cases every token (so ``-LRB-`` becomes ``-lrb-`` and escapes the punctuation filter, which
lists the upper-case forms). Each text is lexed as if followed by a line break and a NUL character, the context it
has in :func:`service.scoring.java_tools.ptb_java_tokens`; pycocoevalcap instead puts the next caption there, which
changes one case only: a text ending in a one-letter acronym such as "vitamin c." keeps the period ("c.") unless the
next caption starts with one of the capitalised words of the acronym rule ("The", "It", ...), where upstream gives
"c". Every line-break character becomes a space first (pycocoevalcap replaces only ``\\n``; the others would split
its lines and misalign the captions).
"""

import functools
import re
from collections.abc import Callable

import regex

PTB_PUNCTUATION = frozenset(
    {"''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-", ".", "?", "!", ",", ":", "-", "--", "...", ";"}
)
"""Tokens pycocoevalcap 1.2 (tokenizer/ptbtokenizer.py ``PUNCTUATIONS``) removes after tokenisation."""

LINE_BREAKS = re.compile("\r\n|[\n\r\u2028\u2029\u000b\u000c\u0085]")
CONTEXT_AFTER = "\n\0"
"""What follows every text when lexed: a line break, then a NUL (skipped by the lexer, and ending every lookahead)."""

_CACHE_SIZE = 1 << 16

_M: dict[str, str] = {}


def _macro(name: str, pattern: str) -> None:
    """Define macro ``name``; ``{NAME}`` in ``pattern`` expands to an earlier macro (as a group)."""
    _M[name] = "(?:" + regex.sub(r"\{([A-Z][A-Z0-9_]+)\}", lambda m: _M[m.group(1)], pattern) + ")"


def _ci(words: str) -> str:
    """Literal alternatives matched in either case (JFlex ``%caseless`` applies to literals only)."""
    return "(?i:" + words + ")"


_macro(
    "SGML",
    r"<(?:[!?][A-Za-z\-][^>\r\n]*|[A-Za-z][A-Za-z0-9_:.\-]*(?:[ ]+(?:[A-Za-z][A-Za-z0-9_:.\-]*"
    r"|[A-Za-z][A-Za-z0-9_:.\-]*[ ]*=[ ]*(?:'[^']*'|\"[^\"]*\")))*[ ]*/?|/[A-Za-z][A-Za-z0-9_:.\-]*)[ ]*>",
)
_macro("SPMDASH", "&" + _ci("md|mdash|ndash") + ";|[\u0096\u0097\u2013\u2014\u2015]")
_macro("SPAMP", _ci("&amp;"))
_macro("SPPUNC", "&" + _ci("ht|tl|ur|lr|qc|ql|qr|odq|cdq") + ";|&#[0-9]+;")
_macro("SPLET", "&[aeiouAEIOU]" + _ci("acute|grave|uml") + ";")
_macro("SPACE", "[ \t\u00a0\u2000-\u200a\u3000]")
_macro("SPACES", "{SPACE}+")
_macro("NEWLINE", "\r|\r?\n|\u2028|\u2029|\u000b|\u000c|\u0085")
_macro("SPACENL", "{SPACE}|{NEWLINE}")
_macro("SPACENLS", "{SPACENL}+")
_macro("DIGIT", r"\p{Nd}|[\u07c0-\u07c9]")
_macro("DATE", r"{DIGIT}{1,2}[\-/]{DIGIT}{1,2}[\-/]{DIGIT}{2,4}")
_macro("NUM", "{DIGIT}+|{DIGIT}*(?:[.:,\u00ad\u066b\u066c]{DIGIT}+)+")
_macro("NUMBER", r"[\-+]?{NUM}")
_macro("SUBSUPNUM", "[\u207a\u207b\u208a\u208b]?(?:[\u2070\u00b9\u00b2\u00b3\u2074-\u2079]+|[\u2080-\u2089]+)")
_macro("FRAC", "(?:{DIGIT}{1,4}[- \u00a0])?{DIGIT}{1,4}(?:\\\\?/|\u2044){DIGIT}{1,4}")
_macro("FRAC2", "[\u00bc\u00bd\u00be\u2153-\u215e]")
_macro("DOLSIGN", r"[A-Z]*\$|#")
_macro("DOLSIGN2", "[\u00a2\u00a3\u00a4\u00a5\u0080\u20a0\u20ac\u060b\u0e3f\u20a4\uffe0\uffe1\uffe5\uffe6]")
_macro(
    "LETTER",
    r"\p{L}|{SPLET}|[\u00ad\u0237-\u024f\u02c2-\u02c5\u02d2-\u02df\u02e5-\u02ff\u0300-\u036f\u0370-\u037d\u0384\u0385"
    r"\u03cf\u03f6\u03fc-\u03ff\u0483-\u0487\u04cf\u04f6-\u04ff\u0510-\u0525\u055a-\u055f\u0591-\u05bd\u05bf\u05c1"
    r"\u05c2\u05c4\u05c5\u05c7\u0615-\u061a\u063b-\u063f\u064b-\u065e\u0670\u06d6-\u06ef\u06fa-\u06ff\u070f\u0711"
    r"\u0730-\u074f\u0750-\u077f\u07a6-\u07b1\u07ca-\u07f5\u07fa\u0900-\u0903\u093c\u093e-\u094e\u0951-\u0955"
    r"\u0962-\u0963\u0981-\u0983\u09bc-\u09c4\u09c7\u09c8\u09cb-\u09cd\u09d7\u09e2\u09e3\u0a01-\u0a03\u0a3c"
    r"\u0a3e-\u0a4f\u0a81-\u0a83\u0abc-\u0acf\u0b82\u0bbe-\u0bc2\u0bc6-\u0bc8\u0bca-\u0bcd\u0c01-\u0c03\u0c3e-\u0c56"
    r"\u0d3e-\u0d44\u0d46-\u0d48\u0e30-\u0e3a\u0e47-\u0e4e\u0eb1-\u0ebc\u0ec8-\u0ecd]",
)
_macro("WORD", "{LETTER}(?:{LETTER}|{DIGIT})*(?:[.!?]{LETTER}(?:{LETTER}|{DIGIT})*)*")
_macro(
    "FILENAME_EXT",
    _ci(
        "bat|bmp|c|class|cgi|cpp|dll|doc|docx|exe|gif|gz|h|htm|html|jar|java|jpeg|jpg|mov|mp3|pdf|php|pl|png|ppt|ps|"
        "py|sql|tar|txt|wav|x|xml|zip"
    ),
)
_macro("FILENAME", "(?:{LETTER}|{DIGIT})+(?:[.](?:{LETTER}|{DIGIT})+)*[.]{FILENAME_EXT}")
_macro("APOS", "['\u0092\u2019]|" + _ci("&apos;"))
_macro("APOSETCETERA", "{APOS}|[`\u0091\u2018\u201b]")
_macro("HYPHEN", "[-_\u058a\u2010\u2011]")
_macro(
    "THING",
    r"(?:[dDoOlL]{APOSETCETERA}[\p{L}\p{Nd}])?[\p{L}\p{Nd}]+"
    r"(?:{HYPHEN}(?:[dDoOlL]{APOSETCETERA}[\p{L}\p{Nd}])?[\p{L}\p{Nd}]+)*",
)
_macro("THINGA", "[A-Z]+(?:(?:[+&]|{SPAMP})[A-Z]+)+")
_macro("THING3", r"[A-Za-z0-9]+(?:-[A-Za-z]+){0,2}(?:\\?/[A-Za-z0-9]+(?:-[A-Za-z]+){0,2}){1,2}")
_macro(
    "ACRO",
    r"[A-Za-z](?:\.[A-Za-z])*|" + _ci(r"canada|sino|korean|eu|japan|non") + _ci(r"-u\.s") + "|" + _ci(r"u\.s\.-")
    + "(?:" + _ci(r"u\.k|u\.s\.s\.r") + ")",
)  # fmt: skip
_macro(
    "ACRO2",
    r"[A-Za-z](?:\.[A-Za-z])+|" + _ci(r"canada|sino|korean|eu|japan|non") + _ci(r"-u\.s") + "|" + _ci(r"u\.s\.-")
    + "(?:" + _ci(r"u\.k|u\.s\.s\.r") + ")",
)  # fmt: skip
_macro("HTHING", "[A-Za-z0-9][A-Za-z0-9.,\u00ad]*(?:-(?:[A-Za-z0-9\u00ad]+|{ACRO2}\\.))+")
_macro("REDAUX", "{APOS}(?:[msdMSD]|" + _ci("re|ve|ll") + ")")
_macro("SWORD", "[A-Za-z\u00ad]*[A-MO-Za-mo-z]\u00ad*")
_macro("SREDAUX", _ci("n") + "{APOSETCETERA}" + _ci("t"))
_macro(
    "APOWORD",
    "{APOS}" + _ci("n") + "{APOS}?|[lLdDjJ]{APOS}|" + _ci("dunkin") + "{APOS}|" + _ci("somethin") + "{APOS}|"
    + _ci("ol") + "{APOS}|{APOS}" + _ci("em") + r"|[A-HJ-XZn]{APOSETCETERA}\p{L}{2}\p{L}*|{APOS}[2-9]0" + _ci("s")
    + "|{APOS}" + _ci("till?") + r"|\p{L}\p{L}*[aeiouyAEIOUY]{APOSETCETERA}[aeiouA-Z]\p{L}*|{APOS}" + _ci("cause")
    + "|" + _ci(r"cont'd\.?|'twas|nor'easter|c'mon|e'er|s'mores|ev'ry|li'l|nat'l") + "|" + _ci("o")
    + "{APOSETCETERA}" + _ci("o"),
)  # fmt: skip
_macro("APOWORD2", _ci("y") + "{APOS}")
_macro("FULLURL", _ci("https?://") + '[^ \t\n\f\r"<>|(){}]+[^ \t\n\f\r"<>|.!?(){},-]')
_macro(
    "LIKELYURL",
    "(?:(?:" + _ci(r"www\.") + '(?:[^ \t\n\f\r"<>|.!?(){},]+\\.)+[a-zA-Z]{2,4})|(?:(?:[^ \t\n\f\r"`\'<>|.!?(){},-_$]+'
    "\\.)+" + _ci("com|net|org|edu") + '))(?:/[^ \t\n\f\r"<>|()]+[^ \t\n\f\r"<>|.!?(){},-])?',
)
_macro(
    "EMAIL",
    "(?:" + _ci("&lt;") + '|<)?[a-zA-Z0-9][^ \t\n\f\r"<>|()\u00a0{}]*@(?:[^ \t\n\f\r"<>|(){}.\u00a0]+\\.)*'
    '[^ \t\n\f\r"<>|(){}.\u00a0]+(?:' + _ci("&gt;") + "|>)?",
)
_macro("TWITTER", "@[a-zA-Z_][a-zA-Z_0-9]*|#{LETTER}+")
_macro(
    "ABBREV1",
    "(?:"
    + _ci("jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|mon|tue|tues|wed|thu|thurs|fri|ala|ariz") + "|A" + _ci("z")
    + "|A" + _ci("rk") + "|" + _ci("calif|colo|conn|ct|dak") + "|D" + _ci("el") + "|" + _ci("fla|ga") + "|I" + _ci("ll")
    + "|" + _ci("ind|kans?|ky") + "|L" + _ci("a") + "|M" + _ci("ass") + "|" + _ci("md|mich|minn") + "|M" + _ci("iss")
    + "|" + _ci("mo|mont|neb|nev|okla") + "|O" + _ci("re") + "|P" + _ci("a") + "|" + _ci("penn|tenn") + "|T" + _ci("ex")
    + "|" + _ci("va|vt") + "|W" + _ci("ash") + "|" + _ci("wisc?|wyo|inc|cos?|corp|pp?t[ye]s?|ltd|plc|rt|bancorp|bhd")
    + "|" + _ci(r"assn|univ|intl|sys|tel|est|ext|sq|jr|sr|bros|(?:ed|ph)\.d|blvd|rd|esq|etc|al|seq|bldg")
    + r")\.",
)  # fmt: skip
_macro(
    "ABBREV4",
    _ci("mr|mrs|ms") + "|M" + _ci("iss") + "|"
    + _ci("drs?|profs?|sens?|reps?|attys?|lt|col|gen|messrs|govs?|adm|rev|maj|sgt|cpl|pvt|capt|ste?|ave|pres|lieut")
    + "|" + _ci("hon|brig|co?mdr|pfc|spc|supts?|det|mt|ft|adj|adv|asst|assoc|ens|insp|mlle|mme|msgr|sfc")
    + "|" + _ci(r"vs|alex|wm|jos|cie|a\.k\.a|cf|treas|ph") + "|{ACRO}|" + _ci("invt|elec|natl|m[ft]g|dept"),
)  # fmt: skip
_macro("ABBREV2", r"{ABBREV4}\.")
_macro("ACRONYM", r"{ACRO}\.")
_macro("ABBREV3", _ci(r"ca|figs?|prop|nos?|art|bldg|pp|op") + r"\.")
_macro(
    "PHONE",
    "(?:\\([0-9]{2,3}\\)[ \u00a0]?|(?:\\+\\+?)?(?:[0-9]{2,4}[\\- \u00a0])?[0-9]{2,4}[\\- \u00a0])[0-9]{3,4}"
    "[\\- \u00a0]?[0-9]{3,5}|(?:(?:\\+\\+?)?[0-9]{2,4}\\.)?[0-9]{2,4}\\.[0-9]{3,4}\\.[0-9]{3,5}",
)
_macro("LDOTS", "\\.{3,5}|(?:\\.[ \u00a0]){2,4}\\.|[\u0085\u2026]")
_macro("INSENTP", "[,;:\u3001]")
_macro(
    "QUOTES",
    "{APOS}|''|[`\u2018\u2019\u201a\u201b\u201c\u201d\u0091\u0092\u0093\u0094\u201e\u201f\u2039\u203a\u00ab\u00bb]{1,2}",
)
_macro("DBLQUOT", '"|' + _ci("&quot;"))
_macro(
    "TBSPEC",
    "-" + _ci("rrb|lrb|rcb|lcb|rsb|lsb") + "-|" + _ci(r"c\.d\.s|pro-|anti-|s(?:&|&amp;)p-500|s(?:&|&amp;)ls") + "|"
    + _ci("cap") + "{APOS}" + _ci("n") + "|" + _ci("c") + "{APOS}" + _ci("est"),
)  # fmt: skip
_macro("TBSPEC2", "{APOS}[0-9][0-9]")
_macro("SMILEY", r"[<>]?[:;=][\-o*']?[()DPdpO\\{@|\[\]]")
_macro(
    "ASIANSMILEY",
    r"[\^x=~<>]\.\[\^" + _ci("x") + r"=~<>\]|[\-\^x=~<>']_[\-\^x=~<>']|\([\-\^x=~<>'][_.]?[\-\^x=~<>']\)"
    r"|\([\^x=~<>']-[\^x=~<>'`]\)",
)
_macro(
    "MISCSYMBOL",
    "[+%&~\\^|\\\\\u00a6\u00a7\u00a8\u00a9\u00ac\u00ae\u00af\u00b0-\u00ba\u00d7\u00f7\u0387\u05be\u05c0\u05c3\u05c6"
    "\u05f3\u05f4\u0600-\u0603\u0606-\u060a\u060c\u0614\u061b\u061e\u066a\u066d\u0703-\u070d\u07f6-\u07f8\u0964"
    "\u0965\u0e4f\u1fbd\u2016\u2017\u2020-\u2023\u2030-\u2038\u203b\u203e-\u2042\u2044\u207a-\u207f\u208a-\u208e"
    "\u2100-\u214f\u2190-\u21ff\u2200-\u2bff\u3012\u30fb\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]",
)
_ACRONYM_NEXT = (
    "(?:A(?i:bout|ccording|dditionally|fter|n|s|t)?|B(?i:ut)|E(?i:arlier)|H(?i:e|er|ere|owever)|I(?i:f|n|t)"
    r"|L(?i:ast)|M(?i:any|ore|r\.|s\.)|N(?i:ow)|O(?i:nce|ne|ther|ur)|S(?i:he|ince|o|ome|uch)"
    "|T(?i:hat|he|heir|hen|here|hese|hey|his)|W(?i:e|hen|hile|hat)|Y(?i:et|ou)|{SGML})"
)

_SINGLE = re.compile("&apos;|'")
_DOUBLE = re.compile('"|&quot;')
_LATEX = tuple(
    (re.compile(p), r)
    for p, r in (
        ("[\u0091\u2018\u201b\u2039]", "`"),
        ("[\u0092\u2019\u203a]", "'"),
        ("[\u0093\u201c\u00ab]", "``"),
        ("[\u0094\u201d\u00bb]", "''"),
    )
)
_FRACTIONS = str.maketrans({"\u00bc": "1/4", "\u00bd": "1/2", "\u00be": "3/4", "\u2153": "1/3", "\u2154": "2/3"})
_CURRENCY = str.maketrans(
    {"\u00a2": "cents", "\u00a3": "#", "\u0080": "$", "\u00a4": "$", "\u20a0": "$", "\u20ac": "$"}
)
_AMP = re.compile("&amp;", re.IGNORECASE)
_PARENS = str.maketrans({"(": "-LRB-", ")": "-RRB-"})


def _quotes(text: str, left: bool) -> str:
    """``handleQuotes`` with LaTeX quotes: ASCII quotes by their guessed side, curly quotes by their shape."""
    text = _SINGLE.sub("`" if left else "'", text)
    text = _DOUBLE.sub("``" if left else "''", text)
    for pattern, repl in _LATEX:
        text = pattern.sub(repl, text)
    return text


def _no_soft_hyphens(text: str) -> str:
    return text.replace("\u00ad", "") or "-"


Action = Callable[[str], tuple[str | None, int]]
"""``action(text) -> (token or None, characters consumed)`` of a matched rule (the head, without trailing context)."""


def _keep(fn: Callable[[str], str] = str) -> Action:
    return lambda t: (fn(t), len(t))


def _push_back(n: int) -> Action:
    return lambda t: (t[:-n], len(t) - n)


def _period_again(text: str) -> tuple[str, int]:
    """The token with its final period, which is also returned again as the next token (``yypushback(1)``)."""
    return text, len(text) - 1


def _acronym(text: str) -> tuple[str, int]:
    """A sentence-final acronym: a one-letter one without its period, a longer one with it; the period again."""
    return (text[:-1], 1) if len(text) == 2 else (text, len(text) - 1)


def _skip(text: str) -> tuple[None, int]:
    return None, len(text)


def _hyphens(text: str) -> tuple[str, int]:
    return ("--" if 3 <= len(text) <= 4 else text), len(text)


_RULES: tuple[tuple[str, str | None, Action], ...] = (
    (r"(?i:c)\+\+", None, _keep()),
    ("(?i:c|f)#", None, _keep()),
    ("(?i:cannot)", None, _push_back(3)),
    ("'(?i:twas)", None, _push_back(3)),
    ("'(?i:tis)", None, _push_back(2)),
    ("(?i:gonna|gotta|lemme|gimme|wanna)", None, _push_back(2)),
    ("{SGML}", None, _keep(lambda t: t.replace(" ", "\u00a0"))),
    ("{SPMDASH}", None, _keep(lambda t: "--")),
    ("{SPAMP}", None, _keep(lambda t: "&")),
    ("{SPPUNC}", None, _keep()),
    ("{WORD}", "{REDAUX}", _keep(_no_soft_hyphens)),
    ("{SWORD}", "{SREDAUX}", _keep(_no_soft_hyphens)),
    ("{WORD}", None, _keep(_no_soft_hyphens)),
    ("{APOWORD}", None, _keep()),
    ("{APOWORD2}", r"\p{L}", _keep()),
    ("{FULLURL}", None, _keep()),
    ("{LIKELYURL}", None, _keep()),
    ("{EMAIL}", None, _keep()),
    ("{TWITTER}", None, _keep()),
    ("{REDAUX}", "[^A-Za-z]", _keep(lambda t: _quotes(t, False))),
    ("{SREDAUX}", "[^A-Za-z]", _keep(lambda t: _quotes(t, False))),
    ("{DATE}", None, _keep()),
    ("{NUMBER}", None, _keep(_no_soft_hyphens)),
    ("{SUBSUPNUM}", None, _keep()),
    ("{FRAC}", None, _keep(lambda t: t.replace(" ", "\u00a0"))),
    ("{FRAC2}", None, _keep(lambda t: t.translate(_FRACTIONS))),
    ("{TBSPEC}", None, _keep(lambda t: _AMP.sub("&", t))),
    ("{THING3}", None, _keep()),
    ("{DOLSIGN}", None, _keep()),
    ("{DOLSIGN2}", None, _keep(lambda t: t.translate(_CURRENCY))),
    ("{ACRONYM}", "{SPACENLS}" + _ACRONYM_NEXT + "{SPACENL}", _acronym),
    ("{ABBREV3}", r"{SPACENL}?\p{Nd}", _keep()),
    (r"(?:(?i:pt)[eyEY]|(?i:co))\.", "{SPACE}(?i:ltd|lim)", _keep()),
    ("{ABBREV1}", r"{SPACENL}(?:{SPACENL}|\p{Lu}|{SGML})", _period_again),
    ("{ABBREV1}", r"[\s\S][\s\S]", _keep()),
    ("{ABBREV1}", None, _period_again),
    ("{ABBREV2}", None, _keep()),
    ("{ABBREV4}", "{SPACE}", _keep()),
    ("{ACRO}", "{SPACENL}", _keep()),
    ("{TBSPEC2}", "{SPACENL}", _keep()),
    ("{FILENAME}", "{SPACENL}|[.?!,]", _keep()),
    (r"{WORD}\.", "{INSENTP}", _keep(_no_soft_hyphens)),
    ("{PHONE}", None, _keep(lambda t: t.replace(" ", "\u00a0").translate(_PARENS))),
    ("{DBLQUOT}", "[A-Za-z0-9$]", _keep(lambda t: _quotes(t, True))),
    ("{DBLQUOT}", None, _keep(lambda t: _quotes(t, False))),
    ("\x7f", None, _skip),
    ("<|(?i:&lt;)", None, _keep(lambda t: "<")),
    (">|(?i:&gt;)", None, _keep(lambda t: ">")),
    ("{SMILEY}", "[^A-Za-z0-9]", _keep(lambda t: t.translate(_PARENS))),
    ("{ASIANSMILEY}", None, _keep(lambda t: t.translate(_PARENS))),
    (r"\{", None, _keep(lambda t: "-LCB-")),
    (r"\}", None, _keep(lambda t: "-RCB-")),
    (r"\[", None, _keep(lambda t: "-LSB-")),
    (r"\]", None, _keep(lambda t: "-RSB-")),
    (r"\(", None, _keep(lambda t: "-LRB-")),
    (r"\)", None, _keep(lambda t: "-RRB-")),
    (r"-+", None, _hyphens),
    ("{LDOTS}", None, _keep(lambda t: "...")),
    ("@+|#+|_+", None, _keep()),
    (r"\*+|(?:\\\*){1,3}", None, _keep()),
    ("{INSENTP}", None, _keep()),
    ("[?!]+", None, _keep()),
    ("[.\u00a1\u00bf\u037e\u0589\u061f\u06d4\u0700-\u0702\u07fa\u3002]", None, _keep()),
    ("=", None, _keep()),
    ("/", None, _keep()),
    (r"{HTHING}\.", "{INSENTP}", _keep(_no_soft_hyphens)),
    ("{HTHING}", None, _keep(_no_soft_hyphens)),
    (r"{THING}\.", "{INSENTP}", _keep()),
    ("{THING}", None, _keep()),
    (r"{THINGA}\.", "{INSENTP}", _keep(lambda t: _AMP.sub("&", t))),
    ("{THINGA}", None, _keep(lambda t: _AMP.sub("&", t))),
    ("'", "[A-Za-z][^ \t\n\r\u00a0]", _keep(lambda t: _quotes(t, True))),
    ("{REDAUX}", None, _keep(lambda t: _quotes(t, False))),
    ("{SREDAUX}", None, _keep(lambda t: _quotes(t, False))),
    ("{QUOTES}", None, _keep(lambda t: _quotes(t, False))),
    ("<<|>>", None, _keep()),
    ("{MISCSYMBOL}", None, _keep()),
    ("\0|{SPACES}|[\u200b\u200e\u200f\ufeff]", None, _skip),
    ("{NEWLINE}", None, _skip),
    ("(?i:&nbsp;)", None, _skip),
    ("[^\n]", None, _skip),
)
"""(head, trailing context or None, action) of every rule of PTBLexer.flex (CoreNLP 3.4.1) in its order; the
last one is the untokenisable-character rule, which drops the character (the jar's ``firstDelete`` default)."""


def _expand(pattern: str) -> str:
    return regex.sub(r"\{([A-Z][A-Z0-9_]+)\}", lambda m: _M[m.group(1)], pattern)


@functools.cache
def _compiled() -> tuple[tuple[regex.Pattern, regex.Pattern | None, regex.Pattern | None, Action], ...]:
    """Per rule: the whole pattern (head + context, leftmost-longest), the head and the context (fullmatch)."""
    out = []
    for head, tail, action in _RULES:
        h, t = _expand(head), None if tail is None else _expand(tail)
        whole = regex.compile(h if t is None else f"(?:{h})(?:{t})", regex.POSIX | regex.V0)
        out.append(
            (
                whole,
                None if t is None else regex.compile(h, regex.V0),
                None if t is None else regex.compile(t, regex.V0),
                action,
            )
        )
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def _candidates(char: str) -> tuple[int, ...]:
    """Indices of the rules a match of which can start with ``char`` (a partial match of the one character)."""
    return tuple(i for i, rule in enumerate(_compiled()) if rule[0].match(char, partial=True) is not None)


_PLAIN_WORD = regex.compile(r"[A-Za-z]+(?=(?:[,;:!?)\]}\"]|(?P<dot>\.))?(?: |$))")
"""ASCII letters followed by a space or the end, possibly after one closing punctuation mark or a period: in a text
without ``<`` or ``@`` no rule starting there can pass the space, so they are one token (unless one of
:data:`_NOT_PLAIN`)."""
_NOT_PLAIN = regex.compile(r"(?i:cannot|gonna|gotta|lemme|gimme|wanna)")


@functools.cache
def _abbreviation() -> regex.Pattern:
    """Words with a period that a rule other than WORD takes whole (ABBREV1-3, ACRONYM, "pty." and "co.")."""
    return regex.compile(_expand(r"{ABBREV1}|{ABBREV2}|{ABBREV3}|{ACRONYM}|(?:(?i:pt)[eyEY]|(?i:co))\."), regex.V0)


def _utf16_units(text: str) -> str:
    """``text`` with every character above U+FFFF as its two UTF-16 surrogates (the units Java's lexer sees)."""
    if max(text, default="") <= "\uffff":
        return text
    return "".join(c if c <= "\uffff" else chr(0xD7C0 + (ord(c) >> 10)) + chr(0xDC00 + (ord(c) & 0x3FF)) for c in text)


def _from_utf16_units(token: str) -> str:
    return token.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _head_length(head: regex.Pattern, tail: regex.Pattern, text: str, pos: int, end: int) -> int:
    """Length of the longest head ``text[pos:pos+k]`` whose remainder up to ``end`` is the trailing context."""
    for k in range(end - pos, -1, -1):
        if head.fullmatch(text, pos, pos + k) and tail.fullmatch(text, pos + k, end):
            return k
    raise AssertionError("trailing-context match without a head")


def lex(text: str) -> list[str]:
    """Raw PTBLexer tokens of ``text`` (one line, followed by :data:`CONTEXT_AFTER`), before lower-casing."""
    units = _utf16_units(text) + CONTEXT_AFTER
    rules = _compiled()
    plain_ok = "<" not in units and "@" not in units
    tokens: list[str] = []
    pos, n = 0, len(units) - len(CONTEXT_AFTER)
    while pos < n:
        if units[pos] == " ":
            pos += 1
            continue
        if plain_ok:
            m = _PLAIN_WORD.match(units, pos, n)
            word = None if m is None else m.group()
            if (
                word
                and not _NOT_PLAIN.fullmatch(word)
                and not (m.group("dot") and _abbreviation().fullmatch(word + "."))
            ):
                tokens.append(word)
                pos += len(word)
                continue
        best, best_len = -1, 0
        for i in _candidates(units[pos]):
            m = rules[i][0].match(units, pos)
            if m is not None and m.end() - pos > best_len:
                best, best_len = i, m.end() - pos
        _, head, tail, action = rules[best]
        length = best_len if head is None else _head_length(head, tail, units, pos, pos + best_len)
        token, consumed = action(units[pos : pos + length])
        if token is not None:
            tokens.append(_from_utf16_units(token))
        pos += consumed
    return tokens


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _cached(text: str) -> tuple[str, ...]:
    line = " ".join(tok.lower() for tok in lex(LINE_BREAKS.sub(" ", text))).rstrip()
    return tuple(w for w in line.split(" ") if w and w not in PTB_PUNCTUATION)


def ptb_tokens(text: str) -> list[str]:
    """pycocoevalcap's tokens of ``text``: PTBTokenizer ``-lowerCase`` (:func:`lex`, lower-cased as Java's
    ``toLowerCase(Locale.ENGLISH)``), the line joined by spaces, right-stripped and split on spaces, then the tokens
    of :data:`PTB_PUNCTUATION` dropped."""
    return list(_cached(text))
