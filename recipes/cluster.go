package recipes

import (
	"strings"

	"github.com/redis/go-redis/v9"
)

// A Redis Cluster runs a command, a MULTI or a script only when all its
// keys hash to one slot. Each recipe's keys derive from one name by
// suffixes (key:fence, key:1000, name:pending:<item> ...), so a name with
// a hash tag ("{...}") keeps them together. On a cluster client a name
// without one is tagged whole ("lock:report" becomes "{lock:report}"):
// the recipe works on a cluster unchanged, and its keys are named as on a
// single server otherwise.
//
// Where a call names several keys of the caller's (SlidingWindow.Allow's
// keys, Sorter's set and columns), those must share a hash tag on a
// cluster, as for any multi-key command; the server refuses them
// otherwise (CROSSSLOT).

// hashTag returns the part of key that Redis Cluster hashes: the text
// between the first "{" and the next "}" when it is not empty.
func hashTag(key string) (string, bool) {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return "", false
	}
	end := strings.IndexByte(key[open+1:], '}')
	if end <= 0 {
		return "", false
	}
	return key[open+1 : open+1+end], true
}

// isCluster reports whether c routes commands by slot.
func isCluster(c redis.UniversalClient) bool {
	_, ok := c.(*redis.ClusterClient)
	return ok
}

// oneSlot is name, tagged whole when some client is a cluster's and name
// has no hash tag, so that every key derived from it shares its slot.
func oneSlot(name string, clients ...redis.UniversalClient) string {
	if _, ok := hashTag(name); ok {
		return name
	}
	for _, c := range clients {
		if isCluster(c) {
			return "{" + name + "}"
		}
	}
	return name
}
