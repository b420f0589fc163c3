; bench/gdnsd.sh: dynamic records (DYNA) and one static A.
$TTL 300
@       SOA ns1 hostmaster 1 7200 3600 1209600 300
@       NS  ns1
ns1     A   127.0.0.1
www     30 DYNA weighted!www_w
hc      30 DYNA multifo!hc_mf
geo     30 DYNA geoip!geo_www
static  A   192.0.2.100
