"""EC2 instance families EKS managed node groups can use, to catch a mistyped instance type early.

An instance type is ``<family>.<size>``; the family is checked against this list (current and
previous generations, x86 and Graviton, accelerated). A family newer than this list is refused
with a message saying so; add it here.
"""

from __future__ import annotations

FAMILIES = frozenset(
    """
    a1 c4 c5 c5a c5ad c5d c5n c6a c6g c6gd c6gn c6i c6id c6in c7a c7g c7gd c7gn c7i c7i-flex c8g c8gd c8gn c8i
    d2 d3 d3en dl1 dl2q f1 f2 g4ad g4dn g5 g5g g6 g6e g6f gr6 g7e h1 hpc6a hpc6id hpc7a hpc7g i3 i3en i4g i4i
    i7i i7ie i8g im4gn inf1 inf2 is4gen m4 m5 m5a m5ad m5d m5dn m5n m5zn m6a m6g m6gd m6i m6id m6idn m6in m7a
    m7g m7gd m7i m7i-flex m8a m8g m8gd m8i p3 p3dn p4d p4de p5 p5e p5en p6-b200 r4 r5 r5a r5ad r5b r5d r5dn r5n
    r6a r6g r6gd r6i r6id r6idn r6in r7a r7g r7gd r7i r7iz r8g r8gd r8i t2 t3 t3a t4g trn1 trn1n trn2 vt1 x1 x1e
    x2gd x2idn x2iedn x2iezn x8g z1d
    """.split()
)


def family(instance_type: str) -> str:
    return instance_type.split(".", 1)[0]


def is_known(instance_type: str) -> bool:
    return family(instance_type) in FAMILIES
