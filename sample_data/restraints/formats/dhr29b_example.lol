# CYANA lower distance limits (one without an upper-limit partner)
   20 THR  HN     19 ASN  HN      1.80
   40 TYR  QD     49 LEU  QD1     2.00
   23 ASN  H      24 SER  H       2.10
