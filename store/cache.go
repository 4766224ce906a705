package store

type campaignCache struct{}

func newCampaignCache() *campaignCache { return &campaignCache{} }
