#!/usr/bin/env python3
"""Instruction mix of the hottest loop of each kernel in `cuobjdump -sass` output, by pipe:
fp64 (DFMA/DMUL/DADD/...), fmaheavy (IMAD*), alu (LOP3/IADD3/SHF/SEL/ISETP/...), mufu, conv.
    cuobjdump -sass binary | python3 tests/gpu/sass_mix.py [name-filter]
"""
import collections
import re
import sys

PIPES = [("fp64", ("DFMA", "DMUL", "DADD", "DSETP", "DMNMX")), ("imad", ("IMAD",)),
         ("mufu", ("MUFU",)), ("conv", ("I2F", "F2I", "F2F", "FRND", "I2I")),
         ("alu", ("LOP3", "IADD3", "SHF", "SEL", "FSEL", "ISETP", "LEA", "IMNMX", "PRMT", "MOV",
                  "FSETP", "PLOP3", "P2R", "R2P", "IABS", "FLO", "POPC", "BREV", "VIADD")),
         ("branch", ("BRA", "EXIT", "BSYNC", "BSSY", "WARPSYNC", "RET", "CALL"))]


def pipe_of(op):
    base = op.split(".")[0]
    for name, ops in PIPES:
        if base in ops:
            return name
    return "other"


def main():
    filt = sys.argv[1] if len(sys.argv) > 1 else ""
    func = None
    code = collections.defaultdict(list)
    for line in sys.stdin:
        m = re.search(r"Function : (\S+)", line)
        if m:
            func = m.group(1)
            continue
        m = re.search(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)(.*?);", line)
        if m and func:
            code[func].append((int(m.group(1), 16), m.group(3), m.group(4)))
    for f, ins in code.items():
        if filt not in f:
            continue
        best = None
        for addr, op, args in ins:  # backward branches delimit loops
            if op.startswith("BRA"):
                t = re.search(r"0x([0-9a-f]+)", args)
                if t and int(t.group(1), 16) < addr:
                    body = [i for i in ins if int(t.group(1), 16) <= i[0] <= addr]
                    if best is None or len(body) > len(best):
                        best = body
        if not best:
            continue
        mix = collections.Counter(pipe_of(op) for _, op, _ in best)
        ops = collections.Counter(op.split(".")[0] for _, op, _ in best)
        print(f"{f[:110]}\n  hottest loop: {len(best)} instructions; by pipe: {dict(mix)}")
        print("  top opcodes:", ", ".join(f"{k} {v}" for k, v in ops.most_common(14)))


if __name__ == "__main__":
    main()
