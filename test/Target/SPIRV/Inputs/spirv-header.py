"""Prints a SPIR-V binary's version and its capabilities by number.

Debian's spirv-dis (SPIRV-Tools 2023.1) stops at capabilities it does not
know (CooperativeMatrixKHR = 6022), so this reads the words itself: the
header's version word, then every OpCapability (opcode 17) instruction.
"""
import struct
import sys

words = open(sys.argv[1], "rb").read()
words = struct.unpack("<%dI" % (len(words) // 4), words)
assert words[0] == 0x07230203, "not SPIR-V"
print("version %d.%d" % ((words[1] >> 16) & 0xFF, (words[1] >> 8) & 0xFF))
i = 5
caps = []
while i < len(words):
    count, opcode = words[i] >> 16, words[i] & 0xFFFF
    if opcode == 17:
        caps.append(words[i + 1])
    i += max(count, 1)
print("capabilities", " ".join(str(c) for c in sorted(caps)))
