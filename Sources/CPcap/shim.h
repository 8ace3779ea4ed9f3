// libpcap (Debian libpcap-dev): reads pcap and pcapng files for `imsim import pcap`.
#include <pcap/pcap.h>
#include <stdio.h>
