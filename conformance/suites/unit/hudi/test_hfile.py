"""HFile (reference_impl.hudi.hfile): the v3 layout Hudi writes for the metadata table, read from bytes Hudi 1.2.0
wrote, round-tripped through the writer (byte-identical to Hudi's for those bytes), and refused when malformed
(every refusal an InvalidTable naming HUDI-LAYOUT-016, never another exception, never an unbounded allocation)."""

from __future__ import annotations

import base64
import io
import json
import random
import struct
import zlib

import fastavro
import pytest

from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.hudi import hfile as H

from .._errors import raises

RULE = "HUDI-LAYOUT-016"


def _unpack(*parts: str) -> bytes:
    return zlib.decompress(base64.b64decode("".join(parts)))


HUDI_BASE_HFILE = _unpack(
    "eNrtlvk31OsDxz+TCY1BlqIbNWPp2tdBGLJEZCtrCY1lTLINM6lIaSZrYe5cpkYjM7YySiU3IruJyWRJTbZQ1tAqGkx83Xu7597TX/D9YV7nvM"
    "/znPOc5/W8z3meH5791p7WNs5OGgAA7NsIYv0HG3OrjQB+uy+LAn+xHoxCkTYyht6ake3GYafrOmhpsLXYnG7NrGzMrXVJkBYU1dQGZoAulzVi"
    "EX9vAlzs/vIHAwBIDADtAP/kB6n963//miHRYgUFetxanFFbLWxE5Q2aRWAAMbU7VQpMUIXRd367ccRV6yiuwv+uCXWYplyIUA2qjozqXFQ1m1"
    "xD4nWd615aDh65YQz6y9eUnTv/53irF2n+owyA8kPsBI6PHRG3uhscBwBGx9AiAKCHhyRYSS7LNt0qiUupou4WYe5hbQYaVIu891TH35P6Zy/g"
    "2dZT29zL/rPuy/jD2/VomSY126FA0jp8yyYA4PUr/XPMWgZR48qV46UbB2gMbJRp0rv1TsjNeb4DvQ6iFzAtmxweDW9Nmq2vWHlWAWN+SQDv+L"
    "ux4/4j7m5ungYbU/2NwH++C9f/3kUSESwlzODx2mg0HqGtkMwhc/iP3/LOAOquXyrhP5r8x6i1EfmfjY7/NQJEsLCwveKHYhqf71fNoZFfKAGk"
    "zrYL8j9k9o7Odo6u9hsyURUAUIH8JBO1/lf22vdZ1JD91rikQrVLU4dUU7db4DXpJ8TUKolVFrw9Rw8qt2UJOcX9UnzxnpIPlzuh0+nv6y0+uq"
    "KSSB9eNc4fUFV3L1RTp+yEmbIn5vnnDc0NOZ3cd32NBV5r7z0tvbquLVetVOD8+/qSXi6Fw3EhM9xZI+tE/io1RwdzwNnj6sl4cmL5pllYOrR7"
    "p+z57KPBCo8eW+vaDnwq6UTC8CVCKi5By9J2ulSnPX7Zj2DxHIcW6td3PcFYVBt1mjm4dn1uf3Jz/4wetvgjzqJn+IBZ+cfreWnInCJ8B+vs+0"
    "glKbsHUplI/6ED5OsrBuczvqtPeMv77hSRi6jdFgcSN3rlB+GVtB8LNH27a+c1TPUbipHeZtdzDQGGb9aJAc/t+ScauQ/2RRkgOWWXHDPF8oNK"
    "JLPTFHbgeVvMgo6EytPVTzIRCzKi2v05s1N9QECAu26QRlGsKbeAkFQhz7Zx1ljzsU90+6XzzprFmdyZ7IOhuVPMZ8hSqrm5ec7zYE8OR1LZfu"
    "+u6ae0X4OZHSR962He/LOh6+4mN/WRJBsPHdk3qAMzHmAZhu2OMDLBSUrDT9kBvSBtQb/WpTH6pfhrs2Zecrl/wIchaPmLT8ZPBuSRbdU8mQBi"
    "L4pwE1JEEuq1d3C+9LCy8BMyho5F33kSW4RYJA5tmYWglBCOA7+xr23ZOSk7KZNWJWMAsR7J3HQ1D9XtuWPqMWUMw6Qytw0aThBSPAiyl1Lg+V"
    "GiLAXDPYhPBIW3H6Kg+w2+qLVECtdU5Z1O7qzQE6u8D0Z2kg51G85k6MuNa7vLJ/EkjnifkSiWWy68WeZdbYdK8QJtUlygWNERPnnmrE+2z+Xs"
    "WHjlS8VdrQRb0h8xfSGc/PusdoLxJeGL7ZH9V2ue3hgojOMGHuvrnn4Lnfu88jn8KL4BcvFsaUTxHRb4eFKXSsp9F4w2I066zYsvkzQlXcEOkS"
    "O9Arc2+kx4WsG1oJ/Rru0I23ubdL2qNL+eVDXlEt5rpsmFlcWmYr3ucCV0q+oOdfvllKxYLKr4tyYqq9SJiYuPx24bMtgUWH4KL/7aXy3M9Gr4"
    "QEtCYGaIdaW54zacbi7zRDjnpGLk4VohVZPwACd90OnFk7YkSOwczfzFKmxgNFTiW1l1Sinlk0Ru/Y1oVNDh7/JvvUFndiVF+cH7vv+aoHcTEN"
    "+KXHuEhCXOPMiqkXlqFAuE7V5O4a3r7b2x/cvSLFVCk851M+tw4RiKfBh5YgThM8C9cyWX4X84LsDJJenaC+7aiubHGDdyzvR8Q1WHe4rkz98a"
    "UPNULjV90DfzfKndeH7xl9QtPuipr8nGaq+iJu5+e9SJX3ubV6c01Rlj6SBWUqTWSgnCwWepDIb6PJ4gc7hDtKjHpyXpTWubNb0uR0nxppcs2K"
    "CN3WrWmxXxpHvZ0tCcbHWF31ENdyzNJGXguDDtDIBA7XfeHaqmryx6P+G+GbVJDchXaVshJw/G1QEWJMWnsIktBp0rfvFew9PntS7enl4ImTod"
    "/4dRo21G9NQp5a9W9qF3ENOnPQrdjVbdbTNjSLKH46ghkwZdvOlVPfu8l8NGu2bRp51KhnMpcAuRamru7zAdH7nymgLIgRXsTQ3R5hVyIafMhV"
    "VxPywt1Ukom+xiS8EUFGSfEhs+1rL08hpo1qbu4ESQHFmfApJisIczTDM5KCw4Chx6DH6Ke0NqUfb6AZ99dQm+uGUsRcGv1qdtvJ3RmRyWCHlY"
    "pAgyRUfZhrHHLFtqkvqcs6GUwSuGGMODHq+MVi1nWS3V92X3Smg5GYwH3AuneTCLjxSUeJoaU+sojO/p72oe5Uxq5ASIiw0xWS5PtE28t4ukrK"
    "9G3XYN1aK07Hk9FRXzBtdiX1NJbLnMLZWeF+6QxQ2Jiu/YDlXR+iwUXzFnSUSEx9T3L3Je0qgz+jRYI39/CvZpFOu9e/1c0KDE7wkTX6uG9hhP"
    "iX+pOzEosrR4RWFuO5KegYSDMFmZk+zAq3zSq7u7dpvlyPANX5Ouw/hp0pz2i/tVvjTYp5tkV3hUXmdVhIwo6q8u1r9hs9tnocW+eLB3wwtJYy"
    "fcZJdW+KOzUd9+gw1DN4/dJlkQakG8LIX6MUIcERFz4N21h8oBrAvIEXy1t1AQpryNWyPzjS6OeNm0NC9WQrcOULVE95jVhE6WdYz38+OeYBQ+"
    "fnesnEi38Oe69uuqf2/pblrmvANLn35hle5+7kMzTTiP0Cmn47Kq3/+cMKSdR74o2wKpvhyGevp6JD1Su6FOrp7KK7UOOFiyN6h3KU1PSr8S0/"
    "O5xjoLs8K0U3ulfZQS2swYkCT7ywV6yxfUm2EZOn4R/eeJrN9ayWmZNqtwjPAIuHPLwwVUFwurO8600th1/JnmbMBJt1jwMwdCUKPXk90RXbY7"
    "Nk9VhnrG9BSYkYhM69qtTmkJtdpW0sf0kOq6hfRzcRwT0XhoFp5ywSPTqA7lMQf5pCOJKTP4hj5lSokXLkLQRpjRHbijg2YRK46DcdN2o8Wjry"
    "I1DiOmTfdK2fCEziSPcVbikpVHRzwb7iA7zmmxslatam/7hjWe70XO7oJ2LWmMen3IljLLbA29u/54oXbjfZvJW5WbrF6QO6l365z/WRQ7D9Mo"
    "0ZWXejO/OXDabvH3/Pz81VzfSZy8ZgRxieZSbgdtYJ7TDwZin4974WgBd5BZqbcnHnQ53k2IyB4tP+dxFvuCH4l9YTq7mO1mRjwvueyzbyh93c"
    "thkrEtEfs8bOkiPeGSp0PMxwLdoYSPa0K9ShAjiMqPT5T7n99BJZWDouXgrVeE5BFqID3QXpAVyAE4BPgaRMdidAKxgcEn0DonToWE6YRF6+Dw"
    "0bGBGLSOQ3R0SBjawSYQh3byto2OxAbGBm4soUCAAAECBAgQIECAAAECBAgQIOD/CqH/AVKI8Vo="
)
HUDI_LOG_HFILE = _unpack(
    "eNrt1vk3FHofB/AZU0JkSdYMxnKtY9+SjMFYhoi5ZIuxjhBGZG+yZKnE2BrbEDPZMlEzGVtybxdZsnWzRZYwduESXZ6ee59zes59/oHnh3md8z"
    "nn+z3f8/6c8/np8zUxQhnBrZAKAADgHQAA1Dj+j+932PcCrIrfYwP85Tg8A8nBosZjMoGebBwGpQpi1vr9fBtCGGrS0rKghH0xI8drHaB0wcHK"
    "VImDUowc5hoQJg5mOK0InG6OmPCd6nXsKaaGNLV2zVjkfS7e3dflATDACE7xJnl7zKtlyquLPf3KbifdaiwhoZuV/GaayR5KpCI6xOSLpIQTwk"
    "HkZNY5aY4FfhkCoQJMDiqMC4Rmi493Vrs7L451E5QG9Rm2yQXPhgoGcwZP2OvbyMoqG1ADe2+v7T5tBTnyppRqAP+ewsLkqp2NDUr9+1Hte0n+"
    "c97LP+b18sAlckM44VtbaXp6WyfTTGUIMoSvUW+2tgBPTJdQkoD/6Sj0V+4fHbV+dAQB/hvCwsrU4jLie/DUPgAghf9HkO3cj+BHp74bEwieCN"
    "wRx1LZZW756CV4Pg0H+cl6IvEOWBppkTQe6tF9+Z4mj8P828mCSR86UrF6JkwlLv2S7UZcYf8qnl/eMoe/h4uH6L2+uvotVkNf47Al7mCf8hP1"
    "djOVO2euHrd+NNxaveLftXy4m6qnjl150FQKPDpGWeY/lyJXIbUMuinVmRfMIeXbssnT4IDo+p7CHXV8H6yp9xTc8QJsCJKncmUHT/fuoHaeHA"
    "RLyfupl0oRX99V82urWT5Uodjx3i3JQi91SXyKrozC3XSYyg/nPYzMGOIVXNx1ZKRFaooOj37YjZOm31CaezK6Ab+RXPY+NPI12QUtOGQe1kfC"
    "uY9PcPSo7Y0NxDazv2xJEA7B//mgKfQ4eAevnW1zuNv2Z2jxHDqCZLXsusSpCNo3mR8tlTIfzGpX7wT8fMWe5JQJr6ywl3WBGV9tqYjvRV2ev1"
    "5reBcU7akk6Gm3ZYidPRzC3Pi88YudgiEHQbCg5sw2wXc9cMPcknhFzd4wXXimsVjxOTESlcXrldDYPbXi+CHXtz82UiKZ7CrXYfRQrpRNFm6m"
    "/rs0KB+CalyQyH2IfIHzvKASO5GvDqjBCDzVjqIGhdWqv9Ff8ivfZHPc+kkpcag0gSIQXQZ4/CDzEXi8Xzz5MA2UpkjRIouS/HmmVktLALLw7P"
    "tihEirqyp+ckTck+LUKyFfrp1vGtGNkX1b6UHlN7TvQ8WVXZKCYjRlzI0w/IOMu7ZKql5wkEqq5Pq6DEzaiwiZ9MX1NETZNK5qIYym8nF+wrzL"
    "h6xu7At8LW84xDIngT187+7szMF2tN4vk9l6651xsM5avpCcBcswP7VvmTtjj72beOHqc+gOya7xR/6zoZ3P9+UsjDFCB5NNcWlVqyXKln5cNK"
    "2vLNB+VXHKxiua6eI9tkeLQwgHZ6sQoLcs+/0g3QB2erZEHZ4I0MwPsZaNwbUIyB3lQp6w8M3ABd0FvHshJzQ27Yxi4BQBvBd0tA0XmeXAcYvN"
    "8f11xia8mWur19RJftrLfUirVwfRMJE5oFonUC/lpRtIvV9X1swlqbx4XX4iUqWWV8k8QrHMc51kyRuU4aRcbm35UmLe902AjOynumtP2eyMAo"
    "vDUg6CZQ70e2eAux8yR/imHj9z3D5phR2RuNN4DtCWIiHq2HXzeBC0ZI9jZQPHu69lAkeczCbT5kXUcC/2QMbfbssV3TxtGrdrdfecrWjFuXnZ"
    "ZQLXS8qcCPuRbcfgSvI9SarRtnYCKVlm205ebMKlrChn33bPgxpgcooQWDPmKoeAh/k2D5I+P1QeFQ0/I1b3dpdBUq+0vcFP2aP33DyaLWiGLA"
    "yHDlqQRurlOvI8n8/vug4P8NH0X2fIeSZdqVQse81WOidh62aZRR1WOGMsjF5EP8C4aHstehYTgi3azYzOX82v+IgweaMXgNc2BRjZBDZxD+c8"
    "EkgapV9NtCo9h7Pki43rhgTVuOHARWLdqrPy6jXLrgfRocWHdboNV+5nEz4yVp6OicFjNWoKjbm9A3+zDIvQkVc4GyahNS90yoLXJ98fBZ27f9"
    "zG7lXh1Oc2R46Pp6G63fyFB8NUC4X12Gex4fXph1Uh3oBb1SyCtbftiiaojPoAKxH8wlB7uedQ5qLep8WSG4lRiqNtm0Kl0IZyE+gfEkLZGu1S"
    "mmsuauQsYc2M9gewYMWK/hUNcpvn9pLIvJ9NwBnx/qEHyMX0xj91sXRV0rsEBsYRZkWYsHVWb3w4oOKhaS+VSNae7Z0qGhgJ72t5eNA9MyHEcT"
    "4lT4YQ6q4aUHS2GuJE9EGd1KY355UdVS3r0nPeQ1DXuEj+P0fhQ39Jy31zZ+aYfLYmW/ge6Vk3me5yfr/omVrGqsTWY9oYewSLN56unITgPMvK"
    "5zAKVP4QRoQ/otKhjgZhen4RL07pd3FPZ/GuNtiH6qM26EK08h2wnsFaeOpuVPY3Bec/Et1KsrymErhRWWbS8731bRf1VrMo975o4a1TsAnHvm"
    "exc0nBmye2dTPBaS2UzV9XDh2Fx8LpCgQds474uIB97Jc6EVDV27vtvfljrxH+kh8JaGWd6bWLfGd0rIFCip57ksGANi+zfKsBf7xAv5yYfYR0"
    "+f6tzoL137Ewz8Dc5QLU7KWcO7KiowWtORwF86bX7VlJiQGIkvSLViMb84G/bU0RK4xLfh36+XNSnIWwUiwrFHFZJ0e3nNXyosynSzv+EvKPWm"
    "76j3d6IE/7vsRYitqFKE5Cybgq7RidwfCtj2403+uFslHQ3NlUUxcpuNmvXaDEjBRr7MVsx9yyyWfeUQV4o21uvIEgmjZgyC3SntwUUo/+yiXS"
    "eQZpoJ2xatzP2SKfZx8o+Np1cyaxqApeFYnVonTFEC4xBFBS4elxNVbgwH4p4ZSFBl9UaCbxAk9itUX0J+RmjLYyjK9QNVZeZfZZ0y0lAbZxkP"
    "GFnmnU2W7o6EgBS21PuVNlb2sttNNu2iMHMSz6nssUikSmWBMrgsLblqwPrPvIdkan8xLFeBsNk2RO+E3RFDm/LjdFUP5IS2nEgGkHicSmV6vx"
    "jdvx+3M5sS6HjyM+1L3oL+F855zy5OMMem9sPUZfX98mgPjhUrFyBy2Q4eXawR3R6bRXMa1PQ9667v77OpgaDwaHPzxInMteDxnobG0WX5O+rW"
    "V32NtgoMugscIG9OEKFY3be639xPxjoPaIEzte6u91j7L795cMIo1kO2Th2QQKPWeRA6oCdEEwoDnAFuCsHoz1g6JD0F4YHygm3Nsf6h8MDbsZ"
    "jEX7+UDNg4O9/X3M4egwH6SDcXBQCBqL/v7kAQQwMTExMTExMTExMTExMTH9PwH9CzH9nkA="
)
HUDI015_LOG_HFILE = _unpack(
    "eNrt1uc73F0aB/DfKIPgGaIbojNMDKJGNwxGN1pEidFHm2jRQ/SWUTYhSBirpCpRHxE1SrRJCIIQBNGiBoloa/fa3ez1/AX7Yj7XOW/Ofe77Ot"
    "93R0fLUgtpZCgBAMAwAICkz/6NAgA0z8+ATb40WuBfzoIJzRcotBhQCzUKt6bgp+0rRqIqtXYTv9g6pWshTDo2Dlrw6M7O/htjP9s7exMM+fuG"
    "6AAGgAhRWz52nvdqw30diqyfVqbpXbeQUWVF+T8u5EmkbQ/WsN62zlWLO6g9Yk4rWRm9cLEM8YJZoeoesctSkNGSLsPaqni0TP5pJkHvtfbTW7"
    "BhWLcoMjs/m7mt4fP9obBfxi1ne2nP+iIGcPNxkEjuwCx3UQ5utEeCSJFw4tNdVPfZ6EBaOCX7aY2mNAgAOqtPstE61zCmppZXziMpnm/4XxNb"
    "/k7s4hQTZxrAgNzZSbl6dYc6BSWSJ5J3GNa9s8OwfyYQQw2o+sc+gZ/f/NZEUfM/czmB33b/M1f+91zK/1a92JTMdNFGKLSJ7nkjOAMAeDr/8i"
    "Dwi9+NM7YzeCiKCYLRensR4jsP2mlfcwT6gi0uWOp86SDMjAvi4J/QWmU14yHr09nNDoHNHB912M84o9m33Nx/tB4HN0ChpV9XIxVVvhfkzZK+"
    "+TjKkS6dnbgsfe/fKLJrO3i3LuZRcRr2/IOvRvSt5fGOjg6a+1LwENP1tj1Tu8czn7+bPJ9dP9DaI/XS9PFV7iepOtX/OmQ5HtXATdYXWbU+mR"
    "7SsF1a7RVjwxyO3lbdrFtTM5tWR21QD5ksscD9MVsH71c24iB6GsZvG2miW+qjGyXwfFbqmMp3yPDlIr2PhML0B4GLOoP3s5YtebW0j08sDTJq"
    "Lcqf6slvsLY9Yw4219HlkL/wTv354cte7z2J7Hqz8MuAlukrfoyYtZT5XmqY62D9O+phdaGn7iMlcTEdsQIedx4/LLH5KB7fipfec+BKtP8hDz"
    "EnfYlaSlbSVDHQs7dXqrJI88xnxPF4LtOiysesfrEeab99BKtTP5CadBVb05UbsQ8Un0MfqZinPFwpCFEctg6SFjKpaV17sHdmUuUpGRa8GLTx"
    "po745oXBfSX7lXS4Wihq8X21kNFk1vsaIuBgzlJm+wDj2fGYwU5fb3snFSxjQf12yT6aATzlDMsNwOxo0G9T4lQbfzZvi3dn8KcRm7xqYnBfl7"
    "xpMOD01OkTmHv8QkDlYPgXCxQ4ne6LiPfjqsdlWFJA6OWEcntYZ0cGrFRfFElzZVxYKFfQMrQnU2LTMD3G+RVtK7M+F9JSLm086bVqA7VV3oLx"
    "YK1/aMyNHWb1uA9zSGKOOzZRx05GRn4Klt+535XQabXHPXB3RI5nZtDMLuZiMbqckB4l6pMjm5Mh8MGvCyZ8eFt19wn61h9u0iz19zRYhu7Vjh"
    "aBOOTyme7xy6WuuBpKkGAuyDjEhPZ0cxFTFgNlatAAXa7V94btCeg0dbc9RZGbjicT5y2Rh4Y/2eFGmiOU1myFLlxdxStez8aMua6Z1cffqTw0"
    "4DfPhw/NLO1pD3sMpK5aM/TFJlEnEb1Yyl++c5jddQExFpeYt/tO2cT3V04KKEOrH83TNyn1hr8OO+XOeSQlZOYIg04OO6fzAbJoT5/G2hwzFb"
    "pdiTCqv4fFe19phQw+j1u4IR4gSmRCGO+MMfT4JDlRO9LVSe6FZ/J4d2yCnIUkqUMoKrzUlH08j2I8uN3EW3vvlELj8cnOR5qerLnaPv2c6RW9"
    "K1xNUTF1+QPmCtVSPtW2Zj5Sdt17ZZjkhp4XvZ5pI5c0/UJCJZeo9tb2CUTWbxX0myNz0ZMnxl93M8FQ/vrYCKoItegYtNH+xVQ7YPs21cSfyD"
    "I9CARrAuJiCt2OCkOG3yQpL/kJK05QwiKk5DrPEt701UmvV5FkXhRfl1LT8lsotK2O5qulKCqibZrD8lwUyr10ICiBuHZXDpYfm9XFczqY9/4h"
    "kNKS8yRb5mEXMasZY/9S/9MbcAxVm+DVVKXNcleqa2GDRHwOnyx7Bousb0SDMUm+7BAsbeO1PDDl43ttInbgwSvB3jDL1YJHKDZMi4PR3WEXro"
    "K8KMQz0TOuwcJRTVkOlD+7Pnh7LH9nuRmmm7c/JY9YY6f5gdkwGEh21JwYVIV8ULTJXa8rorNJNKtmLXUKNPTHjjW4K3IuZP+tubi3meCfpncM"
    "JQQ06HOdbCn3BwewwbdwNd4EXhMkr0KXLbsCY3iBbXVJ1mRyAwDhFIVSG36JyfKOMD1MmJ1zZ5VcMvSbSmJbTNpy6vnY78gx+alcYdQPBcYxKq"
    "l4K6a0HD3NmtWZaa0uCvRf5HlNTFUVFiLZFwyQ0AWRamlV+ZeVs1yO8xx484Qj49gHK2y9LgbfKOlebVk38rluByXonHwdpl38GcUINpAEU5iG"
    "2/J8Q9zlzGGamHVX72ym8vv8SYs3vaDnj47UCbUnJ+1bE2P0Ap7j+rxJIR/r0hcJaycp5Y213JlUdmWtooqtd4I25OHxiOuYC16LbtwWYLdZ2R"
    "BQqqr+NJ7dueele8aHVbGUIFt4tU16S9kZX97M1YqsrgFopg5cAEJRCYjHRyaikkdOc7v6kROSBSNCoqX3wwtx6ktYvEgriSTxvCSvp1zXUb9M"
    "KWD4IAQp8CwpkRfitRhGsJHENHl1p16hB0l+Hm1UK50cOeax1qLfJ76cH6ZTJTjkuPtwTkJJD1+X2Rei57HoT2Pq7YE2N+bF0H+6sniDpL/DxO"
    "amUaeRiY6mZ9TKeqZRnTwAkKlY4WeJ+eePQVDYmDaOkmkXxAnnH7OHgaQBJUpNkD5gBly/gg/wQGBvYl083RCewa44BA6PCAzCB2A93BD6eLwr"
    "zk0fiQ10M7TWxvvexAZgz0tOIICMjIyMjIyMjIyMjIyMjOz/BOX5+gdmFO6J"
)
# HUDI_BASE_HFILE: the files partition's first base file (files-0000-0_0-5-4_00000000000000000.hfile) of a
# copy-on-write table of version 9 written by Spark 3.5 + Hudi 1.2.0 with the metadata table on: one cell
# (__all_partitions__, an empty listing), GZIP blocks, the Bloom filter as meta block "bloomFilter".
# HUDI_LOG_HFILE: the HFile inside the HFile data block of the metadata table's first delta commit log of a
# merge-on-read table of version 9 (same writer): __all_partitions__ and two partitions' file lists.
# HUDI015_LOG_HFILE: the same kind of HFile written by Spark 3.5 + Hudi 0.15.0 (table version 6), which wrote
# HFiles through HBase's writer: minor version 3, CRC32C checksums, full KeyValue keys in the index and LASTKEY.
HUDI_ROWS = [b"__all_partitions__", b"p=x/1", b"p=y 2"]


def _cells(n: int, value_size: int = 40) -> list[tuple[bytes, bytes]]:
    return [(f"key-{i:05d}".encode(), bytes([i % 251]) * value_size + str(i).encode()) for i in range(n)]


def _first_block_header(data: bytes) -> tuple:
    return struct.unpack_from(">8siiqBii", data, 0)


# ---------------------------------------------------------------------------------------------
# Bytes Hudi wrote


@pytest.mark.rule("HUDI-LAYOUT-016", "HUDI-LAYOUT-010")
def test_reads_hudi_base_hfile():
    h = H.HFile(HUDI_BASE_HFILE)
    t = h.trailer
    assert (t.major_version, t.minor_version, t.codec, t.entry_count, t.data_index_count, t.meta_index_count,
            t.num_data_index_levels) == (3, 0, "gzip", 1, 1, 1, 1)
    assert t.comparator_class_name == H.HUDI_COMPARATOR
    cells = list(h)
    assert [c.key for c in cells] == [b"__all_partitions__"]
    assert (cells[0].timestamp, cells[0].key_type) == (H.LATEST_TIMESTAMP, H.KEY_TYPE_PUT)
    assert h.last_key == b"__all_partitions__"
    assert json.loads(h.schema)["name"] == "HoodieMetadataRecord"
    assert h.meta_block_names == ["bloomFilter"]
    assert len(h.meta_block("bloomFilter")) == 71940
    assert h.meta_block("nothing") is None
    assert h.file_info["bloomFilterTypeCode"] == b"DYNAMIC_V0"
    # checksum type NULL, 16 KiB per checksum, and still 4 checksum bytes after the payload
    magic, on_disk, uncompressed, prev, ctype, per, data_size = _first_block_header(HUDI_BASE_HFILE)
    assert (magic, prev, ctype, per, on_disk - (data_size - H.HEADER_SIZE)) == (H.DATA_MAGIC, -1, 0, 16384, 4)


@pytest.mark.rule("HUDI-LAYOUT-016")
def test_reads_hudi_log_hfile_values():
    h = H.HFile(HUDI_LOG_HFILE)
    schema = fastavro.parse_schema(json.loads(h.schema))
    values = {c.key: fastavro.schemaless_reader(io.BytesIO(c.value), schema) for c in h}
    assert list(values) == HUDI_ROWS
    assert values[b"__all_partitions__"]["type"] == 1
    assert set(values[b"__all_partitions__"]["filesystemMetadata"]) == {"p=x/1", "p=y 2"}
    (name, info), = values[b"p=x/1"]["filesystemMetadata"].items()
    assert name.endswith("_20261126143111035.parquet") and info == {"size": 4464, "isDeleted": False}
    assert values[b"p=x/1"]["key"] == ""  # meta fields off: the key lives in the cell key only


@pytest.mark.rule("HUDI-LAYOUT-016")
def test_reads_hudi_015_hbase_written_hfile():
    h = H.HFile(HUDI015_LOG_HFILE)
    t = h.trailer
    assert (t.major_version, t.minor_version, t.codec, t.entry_count) == (3, 3, "gzip", 3)
    assert [c.key for c in h] == HUDI_ROWS
    # HBase puts the whole KeyValue key (family, timestamp, type) in the index and in hfile.LASTKEY
    assert h.data_index[0].key == H.make_key(b"__all_partitions__")
    assert h.file_info["hfile.LASTKEY"] == H.make_key(b"p=y 2") and h.last_key == b"p=y 2"
    magic, on_disk, uncompressed, prev, ctype, per, data_size = _first_block_header(HUDI015_LOG_HFILE)
    assert (ctype, per, on_disk - (data_size - H.HEADER_SIZE)) == (2, 16384, 4)  # one CRC32C chunk
    schema = fastavro.parse_schema(json.loads(h.schema))
    files = {c.key: fastavro.schemaless_reader(io.BytesIO(c.value), schema)["filesystemMetadata"] for c in h}
    (name, info), = files[b"p=x/1"].items()
    assert name.endswith("_20261126144240345.parquet") and info == {"size": 4492, "isDeleted": False}


@pytest.mark.rule("HUDI-LAYOUT-016")
@pytest.mark.parametrize("blob", ["base", "log"])
def test_writer_reproduces_hudi_bytes(blob):
    """Given the cells, file info and meta blocks of a file Hudi wrote, the writer writes the same bytes."""
    data = HUDI_BASE_HFILE if blob == "base" else HUDI_LOG_HFILE
    h = H.HFile(data)
    own = {"hfile.LASTKEY", "hfile.AVG_KEY_LEN", "hfile.AVG_VALUE_LEN", "hfile.CREATE_TIME_TS", "KEY_VALUE_VERSION",
           "MAX_MEMSTORE_TS_KEY"}
    info = {k: v for k, v in h.file_info.items() if k not in own}
    created = struct.unpack(">q", h.file_info["hfile.CREATE_TIME_TS"])[0]
    mine = H.write_hfile(h.items(), compression="gzip", file_info=info,
                         meta_blocks={n: h.meta_block(n) for n in h.meta_block_names}, create_time_ms=created)
    assert mine == data


def test_java_hash_map_order():
    keys = ["schema", "bloomFilterTypeCode", "minRecordKey", "maxRecordKey", "hfile.LASTKEY", "hfile.AVG_KEY_LEN",
            "hfile.AVG_VALUE_LEN", "KEY_VALUE_VERSION", "MAX_MEMSTORE_TS_KEY", "hfile.CREATE_TIME_TS"]
    # the order of Hudi 1.2's file info (HUDI_BASE_HFILE)
    assert H.java_hash_map_order(keys) == [
        "schema", "bloomFilterTypeCode", "hfile.LASTKEY", "hfile.AVG_VALUE_LEN", "minRecordKey", "hfile.AVG_KEY_LEN",
        "maxRecordKey", "KEY_VALUE_VERSION", "MAX_MEMSTORE_TS_KEY", "hfile.CREATE_TIME_TS"]


# ---------------------------------------------------------------------------------------------
# Round trips


@pytest.mark.rule("HUDI-LAYOUT-016")
@pytest.mark.parametrize("codec", ["gzip", "none", "bzip2", "zstd"])
def test_round_trip_several_blocks(codec):
    if codec == "zstd":
        pytest.importorskip("zstandard")
    cells = _cells(300)
    data = H.write_hfile(cells, compression=codec, block_size=1024, file_info={"schema": b"{}"},
                         meta_blocks={"bloomFilter": b"bits" * 100, "other": b""})
    h = H.HFile(data)
    assert h.trailer.codec == codec
    assert h.trailer.data_index_count > 10  # several data blocks
    assert len(list(h.data_block_headers())) == h.trailer.data_index_count
    assert h.items() == cells
    assert h.last_key == cells[-1][0]
    assert h.schema == "{}"
    assert h.meta_block("bloomFilter") == b"bits" * 100 and h.meta_block("other") == b""
    assert [H.row_of_key(e.key) for e in h.data_index][0] == cells[0][0]
    assert H.read_hfile(data) == cells


def test_round_trip_edge_cells():
    cells = [(b"", b""), (b"a", b""), (b"a\x00\xff", b"\x00" * 70000), ("ü".encode(), b"v")]
    h = H.HFile(H.write_hfile(cells, block_size=16))
    assert h.items() == cells
    assert len(h.data_index) == 4  # every cell past the block size closes a block
    # a block over 16 KiB gets one checksum chunk per 16 KiB, with compression off
    raw = H.write_hfile([(b"k", b"x" * 40000)], compression="none")
    magic, on_disk, uncompressed, _, _, _, data_size = _first_block_header(raw)
    assert on_disk - (data_size - H.HEADER_SIZE) == 4 * 3
    assert H.HFile(raw).items() == [(b"k", b"x" * 40000)]


def test_empty_hfile():
    h = H.HFile(H.write_hfile([]))
    assert h.trailer.entry_count == 0 and h.items() == [] and h.last_key == b""


def test_writer_refuses_unsorted_and_long_rows():
    with pytest.raises(ValueError, match="sorted"):
        H.write_hfile([(b"b", b""), (b"a", b"")])
    with pytest.raises(ValueError, match="32767"):
        H.write_hfile([(b"x" * 40000, b"")])


@pytest.mark.parametrize("n", [0, 1, 127, -1, -112, -113, 128, 255, 256, 65535, 1 << 40, -(1 << 40), (1 << 63) - 1,
                               -(1 << 63)])
def test_vlong_round_trip(n):
    raw = H.write_vlong(n)
    assert H.read_vlong(raw, 0, len(raw), "test") == (n, len(raw))


def test_vlong_hadoop_bytes():
    # WritableUtils.writeVLong: 300 -> 0x8e 0x01 0x2c; -300 -> 0x86 0x01 0x2b
    assert H.write_vlong(300) == bytes([0x8E, 0x01, 0x2C])
    assert H.write_vlong(-300) == bytes([0x86, 0x01, 0x2B])
    raises(InvalidTable, RULE, "variable-length", H.read_vlong, bytes([0x8E, 0x01]), 0, 2, "test")


# ---------------------------------------------------------------------------------------------
# Malformed input


def _valid(codec: str = "gzip") -> bytes:
    return H.write_hfile(_cells(40), compression=codec, block_size=512, meta_blocks={"bloomFilter": b"b" * 64})


def _set_trailer(data: bytes, **fields) -> bytes:
    """``data`` with its trailer protobuf rebuilt with ``fields`` replaced (field numbers as in HFile.proto)."""
    h = H.HFile(data)
    t = h.trailer
    values = {1: t.file_info_offset, 2: t.load_on_open_data_offset, 3: t.uncompressed_data_index_size,
              5: t.data_index_count, 6: t.meta_index_count, 7: t.entry_count, 8: t.num_data_index_levels,
              9: t.first_data_block_offset, 10: t.last_data_block_offset, 12: t.compression_codec}
    names = {"data_index_count": 5, "meta_index_count": 6, "entry_count": 7, "load_on_open": 2, "codec": 12,
             "levels": 8, "first": 9, "last": 10}
    for k, v in fields.items():
        values[names[k]] = v
    proto = b"".join(H._pb_put(n, v) for n, v in sorted(values.items()))
    proto += H._pb_put(11, H.HUDI_COMPARATOR.encode())
    trailer = bytearray(H.TRAILER_SIZE)
    body = H.TRAILER_MAGIC + H._pb_put_varint(len(proto)) + proto
    trailer[:len(body)] = body
    trailer[-4:] = data[-4:]
    return data[:-H.TRAILER_SIZE] + bytes(trailer)


def _patch(data: bytes, offset: int, fmt: str, value) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def _read_all(data: bytes):
    h = H.HFile(data)
    cells = list(h)
    for name in h.meta_block_names:
        h.meta_block(name)
    return cells


@pytest.mark.rule("HUDI-LAYOUT-016")
def test_truncated_trailer():
    data = _valid()
    raises(InvalidTable, RULE, "fewer than the 4,096-byte trailer", H.HFile, data[:4000])
    raises(InvalidTable, RULE, "no trailer magic", H.HFile, data[:-1])
    raises(InvalidTable, RULE, "no trailer magic", H.HFile, data[:-100])


@pytest.mark.rule("HUDI-LAYOUT-016")
def test_bad_version_and_trailer_protobuf():
    data = _valid()
    raises(InvalidTable, RULE, "major version 2", H.HFile, data[:-4] + bytes([0, 0, 0, 2]))
    # HFileWriterImpl of early Hudi 1.0 snapshots wrote 3 << 24: minor 3, major 0
    raises(InvalidTable, RULE, "major version 0", H.HFile, data[:-4] + bytes([3, 0, 0, 0]))
    start = len(data) - H.TRAILER_SIZE + 8
    huge = bytearray(data)
    huge[start:start + 5] = b"\xff\xff\xff\xff\x0f"  # a 4 GiB protobuf length
    raises(InvalidTable, RULE, "trailer's protobuf declares", H.HFile, bytes(huge))
    endless = bytearray(data)
    endless[start:len(data) - 4] = b"\xff" * (len(data) - 4 - start)  # a varint that never ends
    raises(InvalidTable, RULE, "varint", H.HFile, bytes(endless))


@pytest.mark.rule("HUDI-LAYOUT-016")
def test_offsets_and_lengths_past_the_end():
    data = _valid()
    raises(InvalidTable, RULE, "load-on-open offset", H.HFile, _set_trailer(data, load_on_open=len(data)))
    raises(InvalidTable, RULE, "load-on-open offset", H.HFile, _set_trailer(data, load_on_open=1 << 62))
    # the first data block claims more bytes on disk than the file has
    raises(InvalidTable, RULE, "on disk", _read_all, _patch(data, 8, ">i", 1 << 30))
    raises(InvalidTable, RULE, "on disk", _read_all, _patch(data, 8, ">i", -5))
    # the root data index (uncompressed, so its bytes can be patched in place) points past the trailer, or its
    # first key's length runs past the index block
    plain = H.write_hfile(_cells(40), compression="none", block_size=512)
    at = H.HFile(plain).trailer.load_on_open_data_offset + H.HEADER_SIZE
    raises(InvalidTable, RULE, "outside", H.HFile, _patch(plain, at, ">q", len(plain)))
    raises(InvalidTable, RULE, "declares a key of", H.HFile, _patch(plain, at + 12, ">B", 0x7F))


@pytest.mark.rule("HUDI-LAYOUT-016")
def test_huge_counts_and_sizes():
    data = _valid()
    raises(InvalidTable, RULE, "entries in", H.HFile, _set_trailer(data, data_index_count=10**9))
    raises(InvalidTable, RULE, "entries in", H.HFile, _set_trailer(data, meta_index_count=(1 << 32) - 1))
    raises(InvalidTable, RULE, "cells, the trailer declares", _read_all, _set_trailer(data, entry_count=10**12))
    raises(InvalidTable, RULE, "more than the 1 cells", _read_all, _set_trailer(data, entry_count=1))
    # a block declaring 2 GiB uncompressed is refused before anything is inflated
    raises(InvalidTable, RULE, "uncompressed bytes", _read_all, _patch(data, 12, ">i", (1 << 31) - 1))
    # ... and one that inflates past what it declares stops at the declared size
    raises(InvalidTable, RULE, "inflates to more than", _read_all, _patch(data, 12, ">i", 10))
    raises(InvalidTable, RULE, "bytes per checksum", _read_all, _patch(data, 25, ">i", 0))


@pytest.mark.rule("HUDI-LAYOUT-016")
def test_gzip_bomb_is_bounded():
    bomb = H.write_hfile([(b"k", b"\x00" * (8 << 20))], compression="gzip")
    assert len(bomb) < 64 << 10
    raises(InvalidTable, RULE, "uncompressed bytes", H.HFile(bomb, max_block_bytes=1 << 20).items)


@pytest.mark.rule("HUDI-LAYOUT-016")
def test_bad_cells():
    plain = H.write_hfile([(b"a", b"1"), (b"b", b"2")], compression="none")
    # cell 0: key length, value length, key (2 + 1 + 1 + 8 + 1 = 13), value, mvcc
    first = H.HEADER_SIZE
    raises(InvalidTable, RULE, "cell in the data block", _read_all, _patch(plain, first, ">i", 1 << 30))
    raises(InvalidTable, RULE, "cell in the data block", _read_all, _patch(plain, first + 4, ">i", -1))
    raises(InvalidTable, RULE, "declares a row of", _read_all, _patch(plain, first + 8, ">H", 500))
    swapped = _patch(plain, first + 10, ">B", ord("c"))  # "a" becomes "c", now after "b"
    raises(InvalidTable, RULE, "out of order", _read_all, swapped)
    raises(InvalidTable, RULE, "is uncompressed but holds", _read_all, _patch(plain, 12, ">i", 5))


@pytest.mark.rule("HUDI-LAYOUT-016")
def test_wrong_block_kinds():
    data = _valid()
    h = H.HFile(data)
    at = h.trailer.load_on_open_data_offset
    raises(InvalidTable, RULE, "unknown block magic", H.HFile, data[:at] + b"IDXROOTX" + data[at + 8:])
    raises(InvalidTable, RULE, "expected the root data index", H.HFile, data[:at] + H.DATA_MAGIC + data[at + 8:])
    raises(InvalidTable, RULE, "expected a data block", _read_all, H.META_MAGIC + data[8:])
    with pytest.raises(Unsupported, match="encoded"):
        _read_all(H.ENCODED_DATA_MAGIC + data[8:])
    raises(InvalidTable, RULE, "not valid compressed data", _read_all, data[:40] + b"\x00" * 8 + data[48:])


@pytest.mark.rule("HUDI-LAYOUT-016")
@pytest.mark.parametrize("codec,name", [(0, "LZO"), (3, "SNAPPY"), (4, "LZ4")])
def test_unsupported_codecs(codec, name):
    with pytest.raises(Unsupported, match=name):
        H.HFile(_set_trailer(_valid(), codec=codec))


@pytest.mark.rule("HUDI-LAYOUT-016")
def test_unknown_codec_id():
    raises(InvalidTable, RULE, "compression codec 7", H.HFile, _set_trailer(_valid(), codec=7))


@pytest.mark.rule("HUDI-LAYOUT-016")
def test_mvcc_timestamps_refused():
    """KEY_VALUE_VERSION 1 with a maximum MVCC timestamp above 0: cells would carry timestamps Hudi never writes."""
    data = H.write_hfile([(b"a", b"1")], file_info={"MAX_MEMSTORE_TS_KEY": struct.pack(">q", 5)})
    with pytest.raises(Unsupported, match="MVCC"):
        H.HFile(data)
    short = H.write_hfile([(b"a", b"1")], file_info={"MAX_MEMSTORE_TS_KEY": b"\x00"})
    raises(InvalidTable, RULE, "not 8", H.HFile, short)
    old = H.write_hfile([(b"a", b"1")], file_info={"KEY_VALUE_VERSION": struct.pack(">i", 0),
                                                     "MAX_MEMSTORE_TS_KEY": struct.pack(">q", 5)})
    assert H.HFile(old).items() == [(b"a", b"1")]


@pytest.mark.rule("HUDI-LAYOUT-016")
def test_tags_are_skipped():
    """HBase cells with tags (file info hfile.MAX_TAGS_LEN) carry a 2-byte tags length and tags after the value."""
    cells = _cells(50)
    for codec in ("none", "gzip"):
        h = H.HFile(H.write_hfile(cells, compression=codec, block_size=300, with_tags=True))
        assert h.has_tags and h.items() == cells
    # without the file info entry the tags length is taken for the MVCC byte and the cells no longer add up
    plain = H.write_hfile(cells, compression="none", with_tags=True, file_info={"hfile.MAX_TAGS_LEN": b""})
    stripped = H.HFile(plain)
    stripped.has_tags = False
    with pytest.raises(InvalidTable):
        list(stripped)


@pytest.mark.rule("HUDI-LAYOUT-016")
def test_multi_level_index_walks_the_scanned_section():
    """HBase wrote multi-level indexes for big files; the data blocks are then found by walking the scanned
    section from the first data block to the last, leaf-index blocks between them skipped."""
    cells = _cells(30)
    data = H.write_hfile(cells, compression="none", block_size=256)
    h = H.HFile(data)
    leaf = H.encode_block(H.LEAF_INDEX_MAGIC, b"\x00" * 8, "none")
    cut = h.data_index[1].offset  # a leaf-index block after the first data block, as HBase interleaves them
    t = h.trailer
    values = {1: t.file_info_offset + len(leaf), 2: t.load_on_open_data_offset + len(leaf),
              3: t.uncompressed_data_index_size, 5: t.data_index_count, 6: t.meta_index_count, 7: t.entry_count,
              8: 2, 9: t.first_data_block_offset, 10: t.last_data_block_offset + len(leaf), 12: t.compression_codec}
    shifted = data[:cut] + leaf + data[cut:]
    proto = b"".join(H._pb_put(n, v) for n, v in sorted(values.items())) + H._pb_put(11, H.HUDI_COMPARATOR.encode())
    trailer = bytearray(H.TRAILER_SIZE)
    body = H.TRAILER_MAGIC + H._pb_put_varint(len(proto)) + proto
    trailer[:len(body)] = body
    trailer[-4:] = data[-4:]
    fixed = shifted[:-H.TRAILER_SIZE] + bytes(trailer)
    assert H.HFile(fixed).items() == cells
    # a block kind that never sits between data blocks is refused
    bad = data[:cut] + H.encode_block(H.META_MAGIC, b"\x00" * 8, "none") + data[cut:]
    with pytest.raises(InvalidTable, match="expected a data block"):
        _read_all(bad[:-H.TRAILER_SIZE] + bytes(trailer))


@pytest.mark.rule("HUDI-LAYOUT-016")
def test_every_truncation_and_many_mutations_fail_cleanly():
    """Whatever the damage, the reader answers with cells or an InvalidTable/Unsupported, nothing else."""
    data = H.write_hfile(_cells(12), compression="gzip", block_size=200, meta_blocks={"bloomFilter": b"x" * 30},
                         file_info={"schema": b"{}"})
    for n in list(range(0, len(data), 7)) + [len(data) - 1]:
        with pytest.raises((InvalidTable, Unsupported)):
            _read_all(data[:n])
    rng = random.Random(16)
    for _ in range(1500):
        damaged = bytearray(data)
        for _ in range(rng.choice((1, 1, 2, 4))):
            damaged[rng.randrange(len(data))] = rng.randrange(256)
        try:
            _read_all(bytes(damaged))
        except (InvalidTable, Unsupported):
            pass
