package pools

import (
	"fmt"
	"strings"
)

// countryCodes are the ISO 3166-1 alpha-2 codes assigned to countries,
// plus XK (Kosovo), the user-assigned code GeoIP databases use. A code not
// in this list matches no client, so it is refused rather than stored.
// geodata's region table lists exactly these codes (a test holds both to
// the same list).
const countryCodes = "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS XK YE YT ZA ZM ZW"

// countrySet indexes countryCodes by letter pair.
var countrySet = func() (set [26 * 26]bool) {
	for _, c := range strings.Fields(countryCodes) {
		set[int(c[0]-'A')*26+int(c[1]-'A')] = true
	}
	return set
}()

// CountryCodes returns every country code glb accepts, in order.
func CountryCodes() []string { return strings.Fields(countryCodes) }

// countryAliases are codes people write that ISO reserves for a country
// under another code.
var countryAliases = map[string]string{
	"UK": "GB", // exceptionally reserved for the United Kingdom
	"EL": "GR", // Greece in the European Union's usage
	"FX": "FR", // metropolitan France, withdrawn
	"SU": "RU", // the Soviet Union, withdrawn
	"YU": "RS", // Yugoslavia, withdrawn
	"TP": "TL", // East Timor, withdrawn
	"ZR": "CD", // Zaire, withdrawn
	"AN": "CW", // Netherlands Antilles, withdrawn
	"CS": "RS", // Serbia and Montenegro, withdrawn
	"EU": "",   // the European Union is not a country: use region_pools
}

// IsCountry reports whether s is an accepted upper-case country code.
func IsCountry(s string) bool {
	return len(s) == 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z' &&
		countrySet[int(s[0]-'A')*26+int(s[1]-'A')]
}

// CountryProblem says why s is not a country code glb accepts, naming the
// code it probably means, or returns "".
func CountryProblem(s string) string {
	if IsCountry(s) {
		return ""
	}
	up := strings.ToUpper(strings.TrimSpace(s))
	if IsCountry(up) {
		return fmt.Sprintf("%q: country codes are upper case; did you mean %q?", s, up)
	}
	if to, ok := countryAliases[up]; ok {
		if to == "" {
			return fmt.Sprintf("%q is not an ISO 3166-1 alpha-2 country code (EU is a union; list its countries or use a region such as WEU)", s)
		}
		return fmt.Sprintf("%q is not an ISO 3166-1 alpha-2 country code; did you mean %q?", s, to)
	}
	if IsRegion(up) {
		return fmt.Sprintf("%q is a region, not a country: use region_pools or a network's region", s)
	}
	if len(up) == 3 {
		return fmt.Sprintf("%q is not an ISO 3166-1 alpha-2 country code: use the two-letter code (US, GB, DE, ...)", s)
	}
	return fmt.Sprintf("%q is not an ISO 3166-1 alpha-2 country code (two letters such as US, GB, DE)", s)
}

// RegionProblem says why s is not one of Regions, naming the one it
// probably means, or returns "".
func RegionProblem(s string) string {
	if IsRegion(s) {
		return ""
	}
	if up := strings.ToUpper(strings.TrimSpace(s)); IsRegion(up) {
		return fmt.Sprintf("%q: region codes are upper case; did you mean %q?", s, up)
	}
	if IsCountry(strings.ToUpper(s)) {
		return fmt.Sprintf("%q is a country, not a region: use country_pools or one of %s", s, strings.Join(Regions, ", "))
	}
	return fmt.Sprintf("unknown region %q: one of %s", s, strings.Join(Regions, ", "))
}
